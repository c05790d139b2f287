//! `memwatch`'s model: per-node free memory against its watermarks over
//! time, reclaim and NUMA-fallback rates, and the moments a node crossed a
//! watermark. Samples are raw counters; rates and events are derived here,
//! so a recorded run can be replayed and tested.

use std::collections::BTreeMap;

use numasleuth_kernel::procfs::zoneinfo::Zone;
use serde::Serialize;

/// One node at one instant, summed over the zones that serve ordinary
/// allocations (every zone with managed pages but DMA).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct NodeSample {
    pub node: u32,
    pub free_pages: u64,
    pub min_pages: u64,
    pub low_pages: u64,
    pub high_pages: u64,
    /// Cumulative `numastat` counters of the node.
    pub numa_miss: Option<u64>,
    pub numa_foreign: Option<u64>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Sample {
    pub t_s: f64,
    pub nodes: Vec<NodeSample>,
    /// Cumulative machine-wide counters from /proc/vmstat.
    pub pgscan_kswapd: u64,
    pub pgscan_direct: u64,
    pub allocstall: u64,
}

pub fn node_samples(zones: &[Zone], numastat: &BTreeMap<u32, BTreeMap<String, u64>>) -> Vec<NodeSample> {
    let mut by_node: BTreeMap<u32, NodeSample> = BTreeMap::new();
    for zone in zones.iter().filter(|z| z.managed_pages > 0 && z.name != "DMA") {
        let n = by_node.entry(zone.node).or_insert_with(|| NodeSample {
            node: zone.node,
            ..NodeSample::default()
        });
        n.free_pages += zone.free_pages;
        n.min_pages += zone.min_pages;
        n.low_pages += zone.low_pages;
        n.high_pages += zone.high_pages;
    }
    for (node, sample) in by_node.iter_mut() {
        let counters = numastat.get(node);
        sample.numa_miss = counters.and_then(|c| c.get("numa_miss").copied());
        sample.numa_foreign = counters.and_then(|c| c.get("numa_foreign").copied());
    }
    by_node.into_values().collect()
}

/// Sums of the vmstat counters that mean "reclaim happened".
pub fn reclaim_counters(vmstat: &BTreeMap<String, u64>) -> (u64, u64, u64) {
    let sum = |prefix: &str| {
        vmstat
            .iter()
            .filter(|(k, _)| k.starts_with(prefix))
            .map(|(_, v)| v)
            .sum()
    };
    (sum("pgscan_kswapd"), sum("pgscan_direct"), sum("allocstall"))
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Row {
    pub t_s: f64,
    pub node: u32,
    pub free_pages: u64,
    pub low_pages: u64,
    pub min_pages: u64,
    pub numa_miss_per_sec: Option<f64>,
    pub numa_foreign_per_sec: Option<f64>,
    pub kswapd_scan_per_sec: f64,
    pub direct_scan_per_sec: f64,
}

fn rate(now: u64, before: u64, dt_s: f64) -> f64 {
    now.saturating_sub(before) as f64 / dt_s
}

/// Rates between `previous` and `current`, one row per node.
pub fn rows(previous: &Sample, current: &Sample) -> Vec<Row> {
    let dt_s = (current.t_s - previous.t_s).max(1e-9);
    current
        .nodes
        .iter()
        .map(|n| {
            let before = previous.nodes.iter().find(|p| p.node == n.node);
            let per_sec = |now: Option<u64>, then: Option<u64>| Some(rate(now?, then?, dt_s));
            Row {
                t_s: current.t_s,
                node: n.node,
                free_pages: n.free_pages,
                low_pages: n.low_pages,
                min_pages: n.min_pages,
                numa_miss_per_sec: per_sec(n.numa_miss, before.and_then(|b| b.numa_miss)),
                numa_foreign_per_sec: per_sec(n.numa_foreign, before.and_then(|b| b.numa_foreign)),
                kswapd_scan_per_sec: rate(current.pgscan_kswapd, previous.pgscan_kswapd, dt_s),
                direct_scan_per_sec: rate(current.pgscan_direct, previous.pgscan_direct, dt_s),
            }
        })
        .collect()
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Event {
    pub t_s: f64,
    pub node: u32,
    /// `below-low`, `below-min`, `recovered`, `direct-reclaim`.
    pub kind: &'static str,
    pub message: String,
}

fn level(n: &NodeSample) -> u8 {
    if n.free_pages <= n.min_pages {
        2
    } else if n.free_pages <= n.low_pages {
        1
    } else {
        0
    }
}

/// What changed between two samples that a person should hear about.
pub fn events(previous: &Sample, current: &Sample) -> Vec<Event> {
    let mut out = Vec::new();
    for node in &current.nodes {
        let Some(before) = previous.nodes.iter().find(|p| p.node == node.node) else {
            continue;
        };
        let (was, is) = (level(before), level(node));
        if is > was {
            let (kind, mark) = if is == 2 {
                ("below-min", "min")
            } else {
                ("below-low", "low")
            };
            let mut message = format!(
                "node {} fell below its {mark} watermark at t={:.1} s ({} free, {mark} {})",
                node.node,
                current.t_s,
                node.free_pages,
                if is == 2 { node.min_pages } else { node.low_pages }
            );
            let foreign = node
                .numa_foreign
                .zip(before.numa_foreign)
                .map(|(a, b)| a.saturating_sub(b));
            let receivers = fallback_receivers(previous, current, node.node);
            if foreign.unwrap_or(0) > 0 && !receivers.is_empty() {
                message.push_str(&format!(
                    ", allocations fell back to node {}",
                    receivers.join(", node ")
                ));
            }
            out.push(Event {
                t_s: current.t_s,
                node: node.node,
                kind,
                message,
            });
        } else if is == 0 && was > 0 {
            out.push(Event {
                t_s: current.t_s,
                node: node.node,
                kind: "recovered",
                message: format!(
                    "node {} is back above its low watermark at t={:.1} s",
                    node.node, current.t_s
                ),
            });
        }
    }
    let direct = current.pgscan_direct.saturating_sub(previous.pgscan_direct);
    let stalls = current.allocstall.saturating_sub(previous.allocstall);
    if direct > 0 || stalls > 0 {
        out.push(Event {
            t_s: current.t_s,
            node: u32::MAX,
            kind: "direct-reclaim",
            message: format!(
                "direct reclaim at t={:.1} s: {direct} pages scanned, {stalls} allocation stalls (allocations waited)",
                current.t_s
            ),
        });
    }
    out
}

/// Nodes whose numa_miss grew: they took allocations meant for another.
fn fallback_receivers(previous: &Sample, current: &Sample, except: u32) -> Vec<String> {
    current
        .nodes
        .iter()
        .filter(|n| n.node != except)
        .filter(|n| {
            let before = previous
                .nodes
                .iter()
                .find(|p| p.node == n.node)
                .and_then(|p| p.numa_miss);
            matches!((n.numa_miss, before), (Some(now), Some(then)) if now > then)
        })
        .map(|n| n.node.to_string())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node(node: u32, free: u64, miss: u64, foreign: u64) -> NodeSample {
        NodeSample {
            node,
            free_pages: free,
            min_pages: 131132,
            low_pages: 163915,
            high_pages: 196698,
            numa_miss: Some(miss),
            numa_foreign: Some(foreign),
        }
    }

    fn sample(t_s: f64, nodes: Vec<NodeSample>, direct: u64) -> Sample {
        Sample {
            t_s,
            nodes,
            pgscan_kswapd: 0,
            pgscan_direct: direct,
            allocstall: 0,
        }
    }

    #[test]
    fn crossing_low_with_fallback_is_reported() {
        // The zone-reclaim incident's node 1 slipping under low, node 0
        // taking its allocations.
        let before = sample(11.3, vec![node(0, 900000, 10, 0), node(1, 174188, 0, 5)], 0);
        let after = sample(12.3, vec![node(0, 880000, 2010, 0), node(1, 160000, 0, 2005)], 0);
        let events = events(&before, &after);
        assert_eq!(events.len(), 1);
        assert_eq!(
            events[0].message,
            "node 1 fell below its low watermark at t=12.3 s (160000 free, low 163915), allocations fell back to node 0"
        );
        let rows = rows(&before, &after);
        assert_eq!(rows[1].numa_foreign_per_sec, Some(2000.0));
        assert_eq!(rows[0].numa_miss_per_sec, Some(2000.0));
    }

    #[test]
    fn below_min_recovery_and_direct_reclaim() {
        let a = sample(0.0, vec![node(1, 170000, 0, 0)], 0);
        let b = sample(1.0, vec![node(1, 100000, 0, 0)], 64);
        let c = sample(2.0, vec![node(1, 200000, 0, 0)], 64);
        let kinds: Vec<_> = events(&a, &b).iter().map(|e| e.kind).collect();
        assert_eq!(kinds, ["below-min", "direct-reclaim"]);
        let kinds: Vec<_> = events(&b, &c).iter().map(|e| e.kind).collect();
        assert_eq!(kinds, ["recovered"]);
    }

    #[test]
    fn dma_zone_is_not_a_node_s_memory() {
        let zones = vec![
            Zone {
                node: 0,
                name: "DMA".into(),
                free_pages: 5,
                managed_pages: 3977,
                ..Zone::default()
            },
            Zone {
                node: 0,
                name: "Normal".into(),
                free_pages: 100,
                low_pages: 10,
                managed_pages: 1000,
                ..Zone::default()
            },
        ];
        let samples = node_samples(&zones, &BTreeMap::new());
        assert_eq!(
            (samples[0].free_pages, samples[0].low_pages, samples[0].numa_miss),
            (100, 10, None)
        );
    }
}
