//! Per-node memory signals sampled beside a live measurement (`probe-latency`,
//! `top`): free pages against the watermarks, numa_miss/numa_foreign and
//! the machine-wide reclaim counters. Samples are raw cumulative counters;
//! what changed between two of them is derived here, so the derivation is
//! tested on synthetic series. memwatch has its own model; this one is
//! deliberately small so the live commands do not depend on its events.

use std::collections::BTreeMap;

use numasleuth_kernel::procfs::zoneinfo::Zone;
use serde::Serialize;

/// One node at one instant: memwatch's sample (free pages and watermarks
/// summed over the zones ordinary allocations use, numastat counters).
pub type NodeSignal = crate::memwatch::NodeSample;

/// One sample of every node plus the machine-wide /proc/vmstat counters
/// (the kernel keeps reclaim scans per machine, not per node).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Signals {
    pub t_s: f64,
    pub nodes: Vec<NodeSignal>,
    pub pgscan_kswapd: u64,
    pub pgscan_direct: u64,
    pub allocstall: u64,
}

/// The nodes of one zoneinfo and numastat reading, as memwatch sums them.
pub fn nodes_from_zones(zones: &[Zone], numastat: &BTreeMap<u32, BTreeMap<String, u64>>) -> Vec<NodeSignal> {
    crate::memwatch::node_samples(zones, numastat, &BTreeMap::new())
}

/// `(pgscan_kswapd, pgscan_direct, allocstall)` machine-wide, as memwatch
/// reads them.
pub use crate::memwatch::reclaim_counters;

/// Which watermark a node's free pages are at or under.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Watermark {
    Min,
    Low,
}

/// Something a node or the reclaim machinery did between two samples.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Signal {
    BelowWatermark {
        node: u32,
        mark: Watermark,
        free_pages: u64,
    },
    /// Pages allocated on `node` because the preferred node was full.
    NumaFallback {
        node: u32,
        pages: u64,
    },
    AllocStalls {
        stalls: u64,
    },
    DirectReclaimScan {
        pages: u64,
    },
    KswapdScan {
        pages: u64,
    },
}

/// What makes two events the same for a spike: the signal, its node and
/// watermark, without the counts (node 0's fallback is not node 1's).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum SignalKind {
    BelowWatermark { node: u32, mark: Watermark },
    NumaFallback { node: u32 },
    AllocStalls,
    DirectReclaimScan,
    KswapdScan,
}

impl Signal {
    pub fn kind(&self) -> SignalKind {
        match *self {
            Signal::BelowWatermark { node, mark, .. } => SignalKind::BelowWatermark { node, mark },
            Signal::NumaFallback { node, .. } => SignalKind::NumaFallback { node },
            Signal::AllocStalls { .. } => SignalKind::AllocStalls,
            Signal::DirectReclaimScan { .. } => SignalKind::DirectReclaimScan,
            Signal::KswapdScan { .. } => SignalKind::KswapdScan,
        }
    }
}

impl std::fmt::Display for Signal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Signal::BelowWatermark { node, mark, free_pages } => {
                let mark = match mark {
                    Watermark::Min => "min",
                    Watermark::Low => "low",
                };
                write!(f, "node {node} below {mark} watermark ({free_pages} free pages)")
            }
            Signal::NumaFallback { node, pages } => {
                write!(f, "node {node}: {pages} pages allocated here as fallback (numa_miss)")
            }
            Signal::AllocStalls { stalls } => write!(f, "direct reclaim: {stalls} allocation stall(s)"),
            Signal::DirectReclaimScan { pages } => write!(f, "direct reclaim scanned {pages} pages"),
            Signal::KswapdScan { pages } => write!(f, "kswapd scanned {pages} pages"),
        }
    }
}

/// A [`Signal`] at a time. In JSON it is `{"t_s", "message"}`, the
/// message being the signal in words.
#[derive(Debug, Clone, PartialEq)]
pub struct SignalEvent {
    pub t_s: f64,
    pub signal: Signal,
}

impl Serialize for SignalEvent {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let mut out = serializer.serialize_struct("SignalEvent", 2)?;
        out.serialize_field("t_s", &self.t_s)?;
        out.serialize_field("message", &self.signal.to_string())?;
        out.end()
    }
}

fn below(n: &NodeSignal) -> Option<Watermark> {
    if n.free_pages <= n.min_pages {
        Some(Watermark::Min)
    } else if n.free_pages <= n.low_pages {
        Some(Watermark::Low)
    } else {
        None
    }
}

/// What changed from `previous` to `current`: a node under a watermark
/// (reported every sample it stays there, since a spike seconds later is
/// still explained by it), NUMA fallback on a node, and reclaim activity.
pub fn events(previous: &Signals, current: &Signals) -> Vec<SignalEvent> {
    let mut out = Vec::new();
    let mut say = |signal: Signal| {
        out.push(SignalEvent {
            t_s: current.t_s,
            signal,
        })
    };
    for node in &current.nodes {
        if let Some(mark) = below(node) {
            say(Signal::BelowWatermark {
                node: node.node,
                mark,
                free_pages: node.free_pages,
            });
        }
        let before = previous.nodes.iter().find(|p| p.node == node.node);
        let delta = |now: Option<u64>, then: Option<u64>| now?.checked_sub(then?).filter(|d| *d > 0);
        if let Some(pages) = delta(node.numa_miss, before.and_then(|b| b.numa_miss)) {
            say(Signal::NumaFallback { node: node.node, pages });
        }
    }
    let grew = |now: u64, then: u64| now.checked_sub(then).filter(|d| *d > 0);
    if let Some(stalls) = grew(current.allocstall, previous.allocstall) {
        say(Signal::AllocStalls { stalls });
    }
    if let Some(pages) = grew(current.pgscan_direct, previous.pgscan_direct) {
        say(Signal::DirectReclaimScan { pages });
    }
    if let Some(pages) = grew(current.pgscan_kswapd, previous.pgscan_kswapd) {
        say(Signal::KswapdScan { pages });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node(node: u32, free: u64, miss: u64) -> NodeSignal {
        NodeSignal {
            node,
            free_pages: free,
            min_pages: 100,
            low_pages: 200,
            high_pages: 300,
            numa_miss: Some(miss),
            numa_foreign: Some(0),
            ..NodeSignal::default()
        }
    }

    fn signals(t_s: f64, nodes: Vec<NodeSignal>, direct: u64, stalls: u64) -> Signals {
        Signals {
            t_s,
            nodes,
            pgscan_kswapd: 0,
            pgscan_direct: direct,
            allocstall: stalls,
        }
    }

    #[test]
    fn quiet_machine_has_no_events() {
        let a = signals(0.0, vec![node(0, 5000, 7), node(1, 5000, 0)], 10, 1);
        let b = signals(0.2, vec![node(0, 4000, 7), node(1, 6000, 0)], 10, 1);
        assert!(events(&a, &b).is_empty());
    }

    #[test]
    fn pressure_fallback_and_reclaim_are_named() {
        let a = signals(0.0, vec![node(0, 5000, 7), node(1, 250, 0)], 10, 1);
        let b = signals(0.2, vec![node(0, 4000, 23), node(1, 150, 0)], 74, 3);
        let got: Vec<String> = events(&a, &b).into_iter().map(|e| e.signal.to_string()).collect();
        assert_eq!(
            got,
            [
                "node 0: 16 pages allocated here as fallback (numa_miss)",
                "node 1 below low watermark (150 free pages)",
                "direct reclaim: 2 allocation stall(s)",
                "direct reclaim scanned 64 pages",
            ]
        );
        let c = signals(0.4, vec![node(0, 4000, 23), node(1, 90, 0)], 74, 3);
        assert_eq!(
            events(&b, &c)[0].signal,
            Signal::BelowWatermark {
                node: 1,
                mark: Watermark::Min,
                free_pages: 90
            }
        );
        let json = serde_json::to_value(&events(&b, &c)[0]).unwrap();
        assert_eq!(json["message"], "node 1 below min watermark (90 free pages)");
        assert_eq!(events(&b, &c)[0].t_s, 0.4);
    }

    #[test]
    fn counters_that_go_backwards_or_vanish_are_not_events() {
        let mut a = signals(0.0, vec![node(0, 5000, 70)], 100, 5);
        let b = signals(0.2, vec![node(0, 5000, 3)], 10, 1);
        assert!(events(&a, &b).is_empty());
        a.nodes[0].numa_miss = None;
        assert!(events(&a, &signals(0.2, vec![node(0, 5000, 900)], 100, 5)).is_empty());
    }

    #[test]
    fn reclaim_counters_sum_every_zone_kind_without_overflow() {
        let vmstat: BTreeMap<String, u64> = [
            ("pgscan_kswapd", 5u64),
            ("pgscan_direct", 7),
            ("pgscan_direct_throttle", 1),
            ("allocstall_normal", u64::MAX),
            ("allocstall_movable", 2),
            ("pgsteal_kswapd", 99),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect();
        // pgscan_direct_throttle counts throttling events, not scanned pages.
        assert_eq!(reclaim_counters(&vmstat), (5, 7, u64::MAX));
    }
}
