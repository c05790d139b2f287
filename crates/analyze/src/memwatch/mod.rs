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

use serde::Serialize;

pub use events::{conditions, Event, EventKind, EventTracker, RECOVERY_SAMPLES};
/// The samples are model's: collectors build them without analysis.
pub use numasleuth_model::memory_signals::{
    machine_counters, node_samples, ordinary_zone, MachineCounters, NodeSample, Sample,
};

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
