//! `top`'s periodic process sampler: per process, where its threads run
//! now and ran at the previous refresh, and its memory per node. The rows
//! (nodes, moves, remote memory) are derived in `analyze::top::proc_row`.
//!
//! Cost is bounded per refresh: at most [`MAX_PROCESSES`] processes and
//! [`MAX_TASK_READS`] thread stat files, and numa_maps (the expensive file)
//! for only [`NUMA_MAPS_PER_REFRESH`] processes, round-robin, with the
//! others carried from their last reading.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::time::Instant;

use numasleuth_kernel::procfs::process::resident_bytes_by_node;
use numasleuth_kernel::{task, Root};
use numasleuth_model::top::{CpuBefore, ProcReading};

pub const MAX_PROCESSES: usize = 4096;
pub const MAX_THREADS_PER_PROCESS: usize = 512;
pub const MAX_TASK_READS: usize = 20_000;
pub const NUMA_MAPS_PER_REFRESH: usize = 8;
/// numa_maps lines read per process at most (one per mapping).
pub const MAX_NUMA_LINES: usize = 65_536;

/// Where each thread of `pid` last ran: `(tid, cpu)` from the `processor`
/// field of its `stat`, for at most `budget` threads (decremented per file
/// read); `None` when the process is gone. Threads that exit meanwhile are
/// left out. This is the migration source; a tracepoint-based one
/// (sched_migrate_task) can replace it without touching the rest.
pub fn thread_cpus(root: &Root, pid: u32, budget: &mut usize) -> Option<Vec<(u32, u32)>> {
    let read = task::threads(root, pid, MAX_THREADS_PER_PROCESS.min(*budget)).ok()??;
    *budget -= read.reads;
    Some(
        read.threads
            .into_iter()
            .filter_map(|t| Some((t.tid, t.stat.processor?)))
            .collect(),
    )
}

struct Known {
    start_time_ticks: Option<u64>,
    cpus: HashMap<u32, u32>,
    bytes_by_node: Option<BTreeMap<u32, u64>>,
    /// Refresh number of the last numa_maps reading (0: never).
    memory_read_at: u64,
    /// CPU time at the last refresh, and when it was read.
    cpu: Option<(u64, Instant)>,
}

impl Known {
    fn new(start_time_ticks: Option<u64>) -> Known {
        Known {
            start_time_ticks,
            cpus: HashMap::new(),
            bytes_by_node: None,
            memory_read_at: 0,
            cpu: None,
        }
    }

    /// Keeps `cpu_ticks` read at `now`, returning the reading it replaces.
    fn swap_cpu(&mut self, cpu_ticks: Option<u64>, now: Instant) -> Option<CpuBefore> {
        let before = self.cpu.take();
        self.cpu = cpu_ticks.map(|ticks| (ticks, now));
        before.map(|(cpu_ticks, at)| CpuBefore {
            cpu_ticks,
            elapsed_s: now.saturating_duration_since(at).as_secs_f64(),
        })
    }
}

#[derive(Default)]
pub struct ProcessScan {
    known: HashMap<u32, Known>,
    refreshes: u64,
}

impl ProcessScan {
    /// One refresh of every process (or only `only`), with notes on what
    /// was capped.
    pub fn refresh(&mut self, root: &Root, only: &[u32]) -> (Vec<ProcReading>, Vec<String>) {
        self.refreshes += 1;
        let mut notes = Vec::new();
        let pids = if only.is_empty() {
            all_pids(root, &mut notes)
        } else {
            only.to_vec()
        };
        let mut budget = MAX_TASK_READS;
        let mut readings = Vec::new();
        for pid in pids {
            if let Some(reading) = self.process(root, pid, &mut budget) {
                readings.push(reading);
            }
        }
        if budget == 0 {
            notes.push(format!("thread reads capped at {MAX_TASK_READS} per refresh"));
        }
        let live: BTreeSet<u32> = readings.iter().map(|r| r.pid).collect();
        self.known.retain(|pid, _| live.contains(pid));
        self.read_memory(root, &mut readings);
        (readings, notes)
    }

    fn process(&mut self, root: &Root, pid: u32, budget: &mut usize) -> Option<ProcReading> {
        let stat = task::process_stat(root, pid).ok()??;
        if stat.is_kernel_thread() {
            return None;
        }
        let cpus = thread_cpus(root, pid, budget)?;
        let known = self
            .known
            .entry(pid)
            .or_insert_with(|| Known::new(stat.start_time_ticks));
        if known.start_time_ticks != stat.start_time_ticks {
            // The PID was reused: nothing from the old process counts.
            *known = Known::new(stat.start_time_ticks);
        }
        let before = std::mem::replace(&mut known.cpus, cpus.iter().copied().collect());
        // Each process's own clock: reading thousands of them takes a
        // while, and its CPU% is over the time between its two readings.
        let cpu_before = known.swap_cpu(stat.cpu_ticks, Instant::now());
        Some(ProcReading {
            pid,
            comm: stat.comm,
            thread_cpus: cpus,
            thread_cpus_before: before,
            bytes_by_node: known.bytes_by_node.clone(),
            cpu_ticks: stat.cpu_ticks,
            cpu_before,
        })
    }

    /// numa_maps for the few processes read longest ago (never read first).
    fn read_memory(&mut self, root: &Root, readings: &mut [ProcReading]) {
        let mut order: Vec<(u64, u32)> = readings
            .iter()
            .filter_map(|r| self.known.get(&r.pid).map(|k| (k.memory_read_at, r.pid)))
            .collect();
        order.sort();
        let due: BTreeSet<u32> = order.iter().take(NUMA_MAPS_PER_REFRESH).map(|(_, pid)| *pid).collect();
        for reading in readings.iter_mut() {
            if let Some(known) = self.known.get_mut(&reading.pid) {
                if due.contains(&reading.pid) {
                    known.bytes_by_node = resident_bytes_by_node(root, reading.pid, MAX_NUMA_LINES);
                    known.memory_read_at = self.refreshes;
                }
                reading.bytes_by_node = known.bytes_by_node.clone();
            }
        }
    }
}

/// Every PID in `/proc`, the first [`MAX_PROCESSES`] by number.
fn all_pids(root: &Root, notes: &mut Vec<String>) -> Vec<u32> {
    let mut all: Vec<u32> = match root.list("proc") {
        Ok(Some(names)) => names.iter().filter_map(|n| n.parse().ok()).collect(),
        Ok(None) => Vec::new(),
        Err(e) => {
            notes.push(format!("cannot list processes: {e}"));
            Vec::new()
        }
    };
    // The listing is sorted as text ("10000" before "2"); the cap keeps
    // the lowest PIDs.
    all.sort_unstable();
    if all.len() > MAX_PROCESSES {
        notes.push(format!(
            "{} processes; showing the first {MAX_PROCESSES} by PID",
            all.len()
        ));
        all.truncate(MAX_PROCESSES);
    }
    all
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_process_is_read_with_its_threads_and_memory() {
        let root = Root::live();
        let me = std::process::id();
        let mut scan = ProcessScan::default();
        let (readings, _) = scan.refresh(&root, &[me, 4_194_304]);
        assert_eq!(readings.len(), 1, "a missing PID is left out, not an error");
        let first = &readings[0];
        assert_eq!(first.pid, me);
        assert!(!first.thread_cpus.is_empty());
        assert!(first.thread_cpus_before.is_empty(), "nothing before the first refresh");
        assert!(first.cpu_ticks.is_some() && first.cpu_before.is_none(), "{first:?}");
        assert!(first
            .bytes_by_node
            .as_ref()
            .is_some_and(|b| b.values().sum::<u64>() > 0));
        let (again, _) = scan.refresh(&root, &[me]);
        assert!(
            again[0].thread_cpus_before.contains_key(&me),
            "the main thread was seen before"
        );
        assert!(again[0].cpu_before.is_some(), "{:?}", again[0]);
    }

    #[test]
    fn the_read_budget_is_spent_per_stat_file() {
        let mut budget = 1;
        let cpus = thread_cpus(&Root::live(), std::process::id(), &mut budget).unwrap();
        assert_eq!(budget, 0);
        assert!(cpus.len() <= 1);
    }

    /// `proc/4242/stat` with this CPU time and start time, on CPU 1.
    fn stat(utime_ticks: u64, stime_ticks: u64, start_time_ticks: u64) -> String {
        format!(
            "4242 (worker) S 1 4242 1 0 -1 4194304 0 0 0 0 {utime_ticks} {stime_ticks} 0 0 20 0 1 0 \
             {start_time_ticks} 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 17 1 0 0"
        )
    }

    #[test]
    fn cpu_time_is_carried_to_the_next_refresh_of_the_same_process() {
        let files = [
            ("proc/4242/stat", stat(100, 50, 777)),
            ("proc/4242/task/4242/stat", stat(100, 50, 777)),
        ];
        let (dir, root) = numasleuth_kernel::test_support::temp_tree(&files);
        let write = |text: String| std::fs::write(dir.path().join("proc/4242/stat"), text).unwrap();
        let mut scan = ProcessScan::default();
        let refresh = |scan: &mut ProcessScan| scan.refresh(&root, &[4242]).0.remove(0);
        let first = refresh(&mut scan);
        assert_eq!(
            (first.cpu_ticks, first.cpu_before),
            (Some(150), None),
            "nothing before the first"
        );
        write(stat(180, 70, 777));
        let second = refresh(&mut scan);
        assert_eq!(second.cpu_ticks, Some(250));
        let before = second.cpu_before.expect("the first refresh's ticks");
        assert_eq!(before.cpu_ticks, 150);
        assert!(before.elapsed_s >= 0.0 && before.elapsed_s < 60.0, "{before:?}");
        // The same PID, started later: another process, whose CPU time
        // must not be taken from the old one's.
        write(stat(5, 0, 999));
        let reused = refresh(&mut scan);
        assert_eq!((reused.cpu_ticks, reused.cpu_before), (Some(5), None));
        // A stat cut before utime (so before the start time too): the
        // process is still listed, its CPU time unknown now and at the
        // next refresh, never a made-up 0.
        write("4242 (worker) S 1 4242 1 0 -1 4194304 0 0 0 0".into());
        let unread = refresh(&mut scan);
        assert_eq!((unread.cpu_ticks, unread.cpu_before), (None, None));
        write(stat(9, 0, 999));
        assert_eq!(refresh(&mut scan).cpu_before, None);
    }
}
