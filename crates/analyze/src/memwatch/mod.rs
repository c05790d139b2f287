//! `memwatch`'s model: per-node free memory against its watermarks over
//! time, reclaim and NUMA-fallback rates, and the moments a node crossed a
//! watermark. Samples are raw counters; rates and events are derived here,
//! so a recorded run can be replayed and tested.
//!
//! /proc/vmstat's reclaim counters are machine-wide: they are kept apart
//! from the per-node figures ([`MachineCounters`], [`MachineRow`]) so no
//! node is blamed for another's reclaim. Per-node reclaim counters are used
//! only where the kernel has them (`nodeN/vmstat`).

mod events;
#[cfg(test)]
mod tests;

use std::collections::BTreeMap;

use numasleuth_parse::gather::MemorySample;
use numasleuth_parse::procfs::zoneinfo::Zone;
use serde::Serialize;

pub use events::{conditions, Event, EventKind, EventTracker, RECOVERY_SAMPLES};

/// One node at one instant, summed over the zones that serve ordinary
/// allocations ([`ordinary_zone`]).
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
    /// Cumulative per-node reclaim counters from `nodeN/vmstat`, on
    /// kernels that keep them there; `None` elsewhere.
    pub pgscan_kswapd: Option<u64>,
    pub pgscan_direct: Option<u64>,
}

/// Cumulative machine-wide counters from /proc/vmstat.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct MachineCounters {
    pub pgscan_kswapd: u64,
    pub pgscan_direct: u64,
    pub pgsteal_kswapd: u64,
    pub pgsteal_direct: u64,
    /// Sum of `allocstall_*`: allocations that entered direct reclaim.
    pub allocstall: u64,
    /// Absent before Linux 4.13.
    pub oom_kill: Option<u64>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Sample {
    pub t_s: f64,
    pub nodes: Vec<NodeSample>,
    pub machine: MachineCounters,
    /// `vm.zone_reclaim_mode` at this sample, when readable: with it set,
    /// direct scans without allocation stalls are node-local reclaim.
    pub zone_reclaim_mode: Option<u64>,
}

impl Sample {
    /// The sample memwatch, top and probe-latency work on, from one
    /// reading of `gather::memory_sample` taken `t_s` into the run.
    pub fn from_reading(t_s: f64, reading: &MemorySample) -> Sample {
        Sample {
            t_s,
            nodes: node_samples(&reading.zones, &reading.numastat, &reading.node_vmstat),
            machine: reading.vmstat.as_ref().map(machine_counters).unwrap_or_default(),
            zone_reclaim_mode: reading.zone_reclaim_mode,
        }
    }
}

/// The median and worst cost of taking a sample, and the median's share
/// of the sampling interval.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Cost {
    pub median_us: f64,
    pub max_us: f64,
    pub share_of_interval_percent: f64,
}

/// [`Cost`] of samples that took `cost_us` each, taken every
/// `interval_us`; `None` without any timed sample.
pub fn cost_of(cost_us: &[f64], interval_us: f64) -> Option<Cost> {
    let mut sorted = cost_us.to_vec();
    sorted.sort_by(f64::total_cmp);
    let median_us = *sorted.get(sorted.len() / 2)?;
    let max_us = sorted.last().copied().unwrap_or(0.0);
    Some(Cost {
        median_us,
        max_us,
        share_of_interval_percent: median_us / interval_us * 100.0,
    })
}

/// Whether a zone speaks for its node's ordinary allocations, by the
/// kernel's own data rather than the zone's name: it manages pages, and its
/// lowmem reserve against allocations aimed at the highest zone
/// (zoneinfo's largest `protection`) leaves some of them to those
/// allocations. That shuts out x86's 16 MiB DMA island beside gigabytes
/// of higher zones (3840 pages against a 6987-page reserve on our 24 GiB
/// machines) and keeps arm64's ZONE_DMA, which holds up to 4 GiB of
/// ordinary memory and is a small guest's only zone. memwatch and doctor
/// agree.
pub(crate) fn ordinary_zone(zone: &Zone) -> bool {
    let reserve_pages = zone.protection_pages.iter().copied().max().unwrap_or(0);
    zone.managed_pages > reserve_pages
}

/// Per-node samples from zoneinfo, `nodeN/numastat` and (optional)
/// `nodeN/vmstat`.
pub fn node_samples(
    zones: &[Zone],
    numastat: &BTreeMap<u32, BTreeMap<String, u64>>,
    node_vmstat: &BTreeMap<u32, BTreeMap<String, u64>>,
) -> Vec<NodeSample> {
    let mut by_node: BTreeMap<u32, NodeSample> = BTreeMap::new();
    for zone in zones.iter().filter(|z| ordinary_zone(z)) {
        let n = by_node.entry(zone.node).or_insert_with(|| NodeSample {
            node: zone.node,
            ..NodeSample::default()
        });
        n.free_pages = n.free_pages.saturating_add(zone.free_pages);
        n.min_pages = n.min_pages.saturating_add(zone.min_pages);
        n.low_pages = n.low_pages.saturating_add(zone.low_pages);
        n.high_pages = n.high_pages.saturating_add(zone.high_pages);
    }
    for (node, sample) in by_node.iter_mut() {
        let counters = numastat.get(node);
        sample.numa_miss = counters.and_then(|c| c.get("numa_miss").copied());
        sample.numa_foreign = counters.and_then(|c| c.get("numa_foreign").copied());
        let vmstat = node_vmstat.get(node);
        sample.pgscan_kswapd = vmstat.and_then(|c| c.get("pgscan_kswapd").copied());
        sample.pgscan_direct = vmstat.and_then(|c| c.get("pgscan_direct").copied());
    }
    by_node.into_values().collect()
}

/// The machine-wide reclaim and OOM counters of /proc/vmstat. Exact names:
/// `pgscan_direct_throttle` is a different thing from `pgscan_direct`.
pub fn machine_counters(vmstat: &BTreeMap<String, u64>) -> MachineCounters {
    let get = |name: &str| vmstat.get(name).copied().unwrap_or(0);
    MachineCounters {
        pgscan_kswapd: get("pgscan_kswapd"),
        pgscan_direct: get("pgscan_direct"),
        pgsteal_kswapd: get("pgsteal_kswapd"),
        pgsteal_direct: get("pgsteal_direct"),
        allocstall: vmstat
            .iter()
            .filter(|(k, _)| k.starts_with("allocstall"))
            .fold(0u64, |sum, (_, v)| sum.saturating_add(*v)),
        oom_kill: vmstat.get("oom_kill").copied(),
    }
}

/// One node's rates between two samples. Reclaim rates appear only when
/// the kernel counts reclaim per node.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Row {
    pub t_s: f64,
    pub node: u32,
    pub free_pages: u64,
    pub low_pages: u64,
    pub min_pages: u64,
    pub high_pages: u64,
    pub numa_miss_per_sec: Option<f64>,
    pub numa_foreign_per_sec: Option<f64>,
    pub kswapd_scan_per_sec: Option<f64>,
    pub direct_scan_per_sec: Option<f64>,
}

/// Machine-wide rates between two samples: reported once, not per node.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MachineRow {
    pub t_s: f64,
    pub kswapd_scan_per_sec: f64,
    pub direct_scan_per_sec: f64,
    pub kswapd_steal_per_sec: f64,
    pub direct_steal_per_sec: f64,
    pub allocstall_per_sec: f64,
    /// OOM kills in the interval.
    pub oom_kills: Option<u64>,
}

fn rate(now: u64, before: u64, dt_s: f64) -> f64 {
    now.saturating_sub(before) as f64 / dt_s
}

fn dt_s(previous: &Sample, current: &Sample) -> f64 {
    (current.t_s - previous.t_s).max(1e-9)
}

/// Rates between `previous` and `current`, one row per node.
pub fn rows(previous: &Sample, current: &Sample) -> Vec<Row> {
    let dt_s = dt_s(previous, current);
    current
        .nodes
        .iter()
        .map(|n| {
            let before = previous.nodes.iter().find(|p| p.node == n.node);
            let per_sec =
                |now: Option<u64>, pick: fn(&NodeSample) -> Option<u64>| Some(rate(now?, before.and_then(pick)?, dt_s));
            Row {
                t_s: current.t_s,
                node: n.node,
                free_pages: n.free_pages,
                low_pages: n.low_pages,
                min_pages: n.min_pages,
                high_pages: n.high_pages,
                numa_miss_per_sec: per_sec(n.numa_miss, |b| b.numa_miss),
                numa_foreign_per_sec: per_sec(n.numa_foreign, |b| b.numa_foreign),
                kswapd_scan_per_sec: per_sec(n.pgscan_kswapd, |b| b.pgscan_kswapd),
                direct_scan_per_sec: per_sec(n.pgscan_direct, |b| b.pgscan_direct),
            }
        })
        .collect()
}

/// Machine-wide rates between `previous` and `current`.
pub fn machine_row(previous: &Sample, current: &Sample) -> MachineRow {
    let dt_s = dt_s(previous, current);
    let (now, then) = (&current.machine, &previous.machine);
    MachineRow {
        t_s: current.t_s,
        kswapd_scan_per_sec: rate(now.pgscan_kswapd, then.pgscan_kswapd, dt_s),
        direct_scan_per_sec: rate(now.pgscan_direct, then.pgscan_direct, dt_s),
        kswapd_steal_per_sec: rate(now.pgsteal_kswapd, then.pgsteal_kswapd, dt_s),
        direct_steal_per_sec: rate(now.pgsteal_direct, then.pgsteal_direct, dt_s),
        allocstall_per_sec: rate(now.allocstall, then.allocstall, dt_s),
        oom_kills: now.oom_kill.zip(then.oom_kill).map(|(a, b)| a.saturating_sub(b)),
    }
}
