//! `top`'s data, one frame per refresh: per node CPU utilisation (from
//! /proc/stat over the node's CPUs), free memory against the watermarks,
//! numa_miss/numa_foreign rates, machine-wide reclaim rates, and the
//! process list. Rates are over the time between two refreshes; the first
//! frame has none.

use std::collections::BTreeMap;
use std::time::Instant;

use numasleuth_analyze::top::{self, Reading};
use numasleuth_kernel::procfs::stat;
use numasleuth_kernel::{IdList, Root};
use numasleuth_model::Topology;
use numasleuth_probe::process_scan::ProcessScan;

pub use numasleuth_model::top::Frame;
use numasleuth_probe::memory_signals;

pub struct Collector {
    root: Root,
    nodes: Vec<(u32, IdList)>,
    cpu_node: BTreeMap<u32, u32>,
    page_bytes: u64,
    only: Vec<u32>,
    previous: Option<(Instant, Reading)>,
    scan: ProcessScan,
}

impl Collector {
    pub fn new(root: Root, topology: &Topology, page_bytes: u64, only: Vec<u32>) -> Collector {
        let nodes: Vec<(u32, IdList)> = topology.nodes.iter().map(|n| (n.id, n.cpus.clone())).collect();
        let cpu_node = topology.cpu_nodes();
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
        let mut notes = Vec::new();
        let ticks = stat::read(&self.root).unwrap_or_else(|e| {
            notes.push(format!("CPU utilisation unavailable: {e}"));
            BTreeMap::new()
        });
        let signals = memory_signals::sample(&self.root, 0.0)
            .map_err(|e| notes.push(format!("memory signals unavailable: {e}")))
            .ok();
        let reading = Reading { ticks, signals };
        let before = self.previous.as_ref().map(|(t, r)| (r, (now - *t).as_secs_f64()));
        let mut frame = top::frame(&self.nodes, before, &reading, self.page_bytes);
        frame.notes = notes;
        let (procs, notes) = self.scan.refresh(&self.root, &self.only);
        frame.procs = procs.iter().map(|p| top::proc_row(p, &self.cpu_node)).collect();
        frame.notes.extend(notes);
        self.previous = Some((now, reading));
        frame
    }
}
