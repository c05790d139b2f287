//! `top`'s sampler, one frame per refresh: per node CPU utilisation (from
//! /proc/stat over the node's CPUs), free memory against the watermarks,
//! numa_miss/numa_foreign rates, machine-wide reclaim rates, and the
//! process list with each process's CPU%. Rates are over the time between
//! two refreshes; the first frame has none.
//!
//! Why here: the reading is the collectors' (probe's process scan and
//! memory-signal sample, kernel's /proc/stat), the rates and rows are
//! analyze's, and joining the two per refresh is this layer's. The CLI
//! keeps the terminal loop (keys, drawing) and only asks for a frame when
//! one is due.

use std::collections::BTreeMap;
use std::time::Instant;

use numasleuth_analyze::top::{self, Reading};
use numasleuth_kernel::procfs::stat;
use numasleuth_kernel::{IdList, Root};
use numasleuth_model::Topology;

pub use numasleuth_model::top::Frame;
use numasleuth_probe::memory_signals;
use numasleuth_probe::process_scan::ProcessScan;

/// What `top` keeps between refreshes: the machine's nodes, the last
/// reading (for rates) and the process scan's state.
pub struct Collector {
    root: Root,
    nodes: Vec<(u32, IdList)>,
    cpu_node: BTreeMap<u32, u32>,
    page_bytes: u64,
    only: Vec<u32>,
    previous: Option<(Instant, Reading)>,
    scan: ProcessScan,
    /// The unit of processes' CPU times, for their CPU%.
    ticks_per_sec: u64,
}

impl Collector {
    /// A sampler of `root`; `only` limits the process list to these PIDs
    /// (empty: every process).
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
            ticks_per_sec: numasleuth_probe::damon_collect::ticks_per_sec(),
        }
    }

    /// Reads everything once and returns the frame; what could not be
    /// read is a note in the frame, never an error.
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
        frame.procs = procs
            .iter()
            .map(|p| top::proc_row(p, &self.cpu_node, self.ticks_per_sec))
            .collect();
        frame.notes.extend(notes);
        self.previous = Some((now, reading));
        frame
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use numasleuth_kernel::test_support::fixture;

    fn topology(root: &Root) -> Topology {
        let readings = numasleuth_kernel::gather::read_topology(root).unwrap();
        Topology::build_degraded(&readings).0
    }

    #[test]
    fn the_first_frame_has_no_rates_and_the_second_has_them() {
        let root = fixture("qemu-two-nodes");
        let topology = topology(&root);
        let mut collector = Collector::new(root, &topology, 4096, vec![]);
        let first = collector.refresh();
        assert_eq!(first.nodes.iter().map(|n| n.node).collect::<Vec<_>>(), [0, 1]);
        assert!(first.nodes.iter().all(|n| n.free_bytes.is_some()), "{:?}", first.notes);
        assert!(first.nodes.iter().all(|n| n.numa_miss_per_sec.is_none()));
        assert!(first.kswapd_scan_per_sec.is_none());
        // The same snapshot read again: every counter stood still.
        let second = collector.refresh();
        assert!(
            second.nodes.iter().all(|n| n.numa_miss_per_sec == Some(0.0)),
            "{:?}",
            second.nodes
        );
        assert_eq!(second.kswapd_scan_per_sec, Some(0.0));
    }

    #[test]
    fn a_process_has_a_cpu_percent_from_its_second_frame_on() {
        // The fixtures hold no process stat: a tree of one process.
        let stat = "4242 (worker) S 1 4242 1 0 -1 4194304 0 0 0 0 100 50 0 0 20 0 1 0 777 \
                    0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 17 1 0 0";
        let files = [("proc/4242/stat", stat), ("proc/4242/task/4242/stat", stat)];
        let (_dir, root) = numasleuth_kernel::test_support::temp_tree(&files);
        let topology = topology(&fixture("qemu-two-nodes"));
        let mut collector = Collector::new(root, &topology, 4096, vec![4242]);
        let first = collector.refresh();
        assert_eq!(first.procs.len(), 1, "{:?}", first.notes);
        assert_eq!(first.procs[0].cpu_percent, None, "no figure before a second reading");
        let second = collector.refresh();
        assert_eq!(second.procs[0].cpu_percent, Some(0.0), "its CPU time stood still");
    }

    #[test]
    fn what_cannot_be_read_is_a_note_not_an_error() {
        let empty = tempfile::tempdir().unwrap();
        let root = Root::directory(empty.path()).unwrap();
        let topology = topology(&fixture("qemu-two-nodes"));
        let frame = Collector::new(root, &topology, 4096, vec![]).refresh();
        assert!(
            frame.notes.iter().any(|n| n.starts_with("CPU utilisation unavailable")),
            "{:?}",
            frame.notes
        );
        assert!(
            frame.notes.iter().any(|n| n.starts_with("memory signals unavailable")),
            "{:?}",
            frame.notes
        );
        assert!(frame.nodes.iter().all(|n| n.free_bytes.is_none()));
    }
}
