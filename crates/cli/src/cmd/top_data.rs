//! `top`'s data, one frame per refresh: per node CPU utilisation (from
//! /proc/stat over the node's CPUs), free memory against the watermarks,
//! numa_miss/numa_foreign rates, machine-wide reclaim rates, and the
//! process list. Rates are over the time between two refreshes; the first
//! frame has none.

use std::collections::BTreeMap;
use std::time::Instant;

use numasleuth_analyze::node_signals::Signals;
use numasleuth_analyze::rates::{cpu_util_percent, per_sec};
use numasleuth_kernel::procfs::stat::{self, CpuTicks};
use numasleuth_kernel::{IdList, Root};
use numasleuth_model::Topology;

use super::node_sampler;
use super::top_procs::ProcessScan;
pub use numasleuth_model::top::{Frame, NodeRow};

pub struct Collector {
    root: Root,
    nodes: Vec<(u32, IdList)>,
    cpu_node: BTreeMap<u32, u32>,
    page_bytes: u64,
    only: Vec<u32>,
    previous: Option<(Instant, BTreeMap<u32, CpuTicks>, Option<Signals>)>,
    scan: ProcessScan,
}

impl Collector {
    pub fn new(root: Root, topology: &Topology, page_bytes: u64, only: Vec<u32>) -> Collector {
        let nodes: Vec<(u32, IdList)> = topology.nodes.iter().map(|n| (n.id, n.cpus.clone())).collect();
        let cpu_node = nodes
            .iter()
            .flat_map(|(node, cpus)| cpus.iter().map(move |cpu| (cpu, *node)))
            .collect();
        Collector {
            root,
            nodes,
            cpu_node,
            page_bytes,
            only,
            previous: None,
            scan: ProcessScan::default(),
        }
    }

    pub fn refresh(&mut self) -> Frame {
        let now = Instant::now();
        let mut frame = Frame::default();
        let ticks = stat::read(&self.root).unwrap_or_else(|e| {
            frame.notes.push(format!("CPU utilisation unavailable: {e}"));
            BTreeMap::new()
        });
        let signals = node_sampler::sample(&self.root, 0.0)
            .map_err(|e| frame.notes.push(format!("memory signals unavailable: {e}")))
            .ok();
        let previous = self.previous.take();
        let dt_s = previous.as_ref().map(|(t, _, _)| (now - *t).as_secs_f64().max(1e-3));
        let (before_ticks, before_signals) = previous.map(|(_, t, s)| (t, s)).unwrap_or_default();
        let pages = |p: u64| p.saturating_mul(self.page_bytes);
        for (node, cpus) in &self.nodes {
            let signal = signals.as_ref().and_then(|s| s.nodes.iter().find(|n| n.node == *node));
            let before = before_signals
                .as_ref()
                .and_then(|s| s.nodes.iter().find(|n| n.node == *node));
            let rate = |pick: fn(&numasleuth_analyze::node_signals::NodeSignal) -> Option<u64>| {
                per_sec(signal.and_then(pick), before.and_then(pick), dt_s?)
            };
            frame.nodes.push(NodeRow {
                node: *node,
                cpus: cpus.to_string(),
                cpu_util_percent: cpu_util_percent(&before_ticks, &ticks, cpus),
                free_bytes: signal.map(|s| pages(s.free_pages)),
                min_bytes: signal.map(|s| pages(s.min_pages)),
                low_bytes: signal.map(|s| pages(s.low_pages)),
                high_bytes: signal.map(|s| pages(s.high_pages)),
                numa_miss_per_sec: rate(|n| n.numa_miss),
                numa_foreign_per_sec: rate(|n| n.numa_foreign),
            });
        }
        if let (Some(now_s), Some(then_s), Some(dt_s)) = (&signals, &before_signals, dt_s) {
            frame.kswapd_scan_per_sec = per_sec(Some(now_s.pgscan_kswapd), Some(then_s.pgscan_kswapd), dt_s);
            frame.direct_scan_per_sec = per_sec(Some(now_s.pgscan_direct), Some(then_s.pgscan_direct), dt_s);
            frame.allocstall_per_sec = per_sec(Some(now_s.allocstall), Some(then_s.allocstall), dt_s);
        }
        let (procs, notes) = self.scan.refresh(&self.root, &self.cpu_node, &self.only);
        frame.procs = procs;
        frame.notes.extend(notes);
        self.previous = Some((now, ticks, signals));
        frame
    }
}
