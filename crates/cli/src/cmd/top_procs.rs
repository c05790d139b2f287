//! `top`'s process list: per process, its threads' nodes, its memory on
//! nodes none of its threads run on (remote), and how many of its threads
//! moved to another CPU or node since the last refresh.
//!
//! Cost is bounded per refresh: at most [`MAX_PROCESSES`] processes and
//! [`MAX_TASK_READS`] thread stat files, and numa_maps (the expensive file)
//! for only [`NUMA_MAPS_PER_REFRESH`] processes, round-robin, with the
//! others shown from their last reading.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use numasleuth_analyze::migrations::refresh::moves_between;
use numasleuth_kernel::procfs::process::resident_bytes_by_node;
use numasleuth_kernel::procfs::task::parse_stat;
use numasleuth_kernel::Root;
use numasleuth_model::process::remote_bytes;
pub use numasleuth_model::top::ProcRow;

pub const MAX_PROCESSES: usize = 4096;
pub const MAX_THREADS_PER_PROCESS: usize = 512;
pub const MAX_TASK_READS: usize = 20_000;
pub const NUMA_MAPS_PER_REFRESH: usize = 8;
/// numa_maps lines read per process at most (one per mapping).
pub const MAX_NUMA_LINES: usize = 65_536;

/// Where each thread of `pid` last ran: `(tid, cpu)` from the `processor`
/// field of `/proc/PID/task/TID/stat`. This is the migration source; a
/// tracepoint-based one (sched_migrate_task) can replace it without
/// touching the rest. `budget` is decremented per file read.
pub fn thread_cpus(root: &Root, pid: u32, budget: &mut usize) -> Option<Vec<(u32, u32)>> {
    let tids = root.list(&format!("proc/{pid}/task")).ok()??;
    let mut out = Vec::new();
    for tid in tids
        .iter()
        .filter_map(|t| t.parse::<u32>().ok())
        .take(MAX_THREADS_PER_PROCESS)
    {
        if *budget == 0 {
            break;
        }
        *budget -= 1;
        let Ok(text) = root.read(&format!("proc/{pid}/task/{tid}/stat")) else {
            continue; // the thread exited meanwhile
        };
        if let Some(cpu) = parse_stat(&text).ok().and_then(|s| s.processor) {
            out.push((tid, cpu));
        }
    }
    Some(out)
}

struct Known {
    start_time_ticks: Option<u64>,
    cpus: HashMap<u32, u32>,
    bytes_by_node: Option<BTreeMap<u32, u64>>,
    /// Refresh number of the last numa_maps reading (0: never).
    memory_read_at: u64,
}

#[derive(Default)]
pub struct ProcessScan {
    known: HashMap<u32, Known>,
    refreshes: u64,
}

impl ProcessScan {
    /// One refresh of every process (or only `only`), with notes on what
    /// was capped.
    pub fn refresh(&mut self, root: &Root, cpu_node: &BTreeMap<u32, u32>, only: &[u32]) -> (Vec<ProcRow>, Vec<String>) {
        self.refreshes += 1;
        let mut notes = Vec::new();
        let pids = if only.is_empty() {
            let mut all: Vec<u32> = match root.list("proc") {
                Ok(Some(names)) => names.iter().filter_map(|n| n.parse().ok()).collect(),
                Ok(None) => Vec::new(),
                Err(e) => {
                    notes.push(format!("cannot list processes: {e}"));
                    Vec::new()
                }
            };
            if all.len() > MAX_PROCESSES {
                notes.push(format!(
                    "{} processes; showing the first {MAX_PROCESSES} by PID",
                    all.len()
                ));
                all.truncate(MAX_PROCESSES);
            }
            all
        } else {
            only.to_vec()
        };
        let mut budget = MAX_TASK_READS;
        let mut rows = Vec::new();
        for pid in pids {
            if let Some(row) = self.process(root, pid, cpu_node, &mut budget) {
                rows.push(row);
            }
        }
        if budget == 0 {
            notes.push(format!("thread reads capped at {MAX_TASK_READS} per refresh"));
        }
        let live: BTreeSet<u32> = rows.iter().map(|r| r.pid).collect();
        self.known.retain(|pid, _| live.contains(pid));
        self.read_memory(root, &mut rows);
        (rows, notes)
    }

    fn process(&mut self, root: &Root, pid: u32, cpu_node: &BTreeMap<u32, u32>, budget: &mut usize) -> Option<ProcRow> {
        let stat = parse_stat(&root.read(&format!("proc/{pid}/stat")).ok()?).ok()?;
        if stat.is_kernel_thread() {
            return None;
        }
        let cpus = thread_cpus(root, pid, budget)?;
        let known = self.known.entry(pid).or_insert_with(|| Known {
            start_time_ticks: stat.start_time_ticks,
            cpus: HashMap::new(),
            bytes_by_node: None,
            memory_read_at: 0,
        });
        if known.start_time_ticks != stat.start_time_ticks {
            // The PID was reused: nothing from the old process counts.
            *known = Known {
                start_time_ticks: stat.start_time_ticks,
                cpus: HashMap::new(),
                bytes_by_node: None,
                memory_read_at: 0,
            };
        }
        let (cpu_moves, node_moves) = moves_between(&known.cpus, &cpus, cpu_node);
        known.cpus = cpus.iter().copied().collect();
        let thread_nodes = cpus.iter().filter_map(|(_, cpu)| cpu_node.get(cpu).copied()).collect();
        Some(ProcRow {
            pid,
            comm: stat.comm,
            threads: cpus.len(),
            thread_nodes,
            bytes_by_node: known.bytes_by_node.clone(),
            remote_bytes: None,
            cpu_moves,
            node_moves,
        })
    }

    /// numa_maps for the few processes read longest ago (never read first).
    fn read_memory(&mut self, root: &Root, rows: &mut [ProcRow]) {
        let mut order: Vec<(u64, u32)> = rows
            .iter()
            .filter_map(|r| self.known.get(&r.pid).map(|k| (k.memory_read_at, r.pid)))
            .collect();
        order.sort();
        let due: BTreeSet<u32> = order.iter().take(NUMA_MAPS_PER_REFRESH).map(|(_, pid)| *pid).collect();
        for row in rows.iter_mut() {
            if let Some(known) = self.known.get_mut(&row.pid) {
                if due.contains(&row.pid) {
                    known.bytes_by_node = resident_bytes_by_node(root, row.pid, MAX_NUMA_LINES);
                    known.memory_read_at = self.refreshes;
                }
                row.bytes_by_node = known.bytes_by_node.clone();
            }
            row.remote_bytes = row
                .bytes_by_node
                .as_ref()
                .and_then(|b| remote_bytes(b, &row.thread_nodes.iter().copied().collect()));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_process_is_listed_with_its_threads_and_memory() {
        let root = Root::live();
        let me = std::process::id();
        let cpu_node: BTreeMap<u32, u32> = (0..4096).map(|c| (c, 0)).collect();
        let mut scan = ProcessScan::default();
        let (rows, _) = scan.refresh(&root, &cpu_node, &[me, 4_194_304]);
        assert_eq!(rows.len(), 1, "a missing PID is left out, not an error");
        let row = &rows[0];
        assert_eq!(row.pid, me);
        assert!(row.threads >= 1);
        assert_eq!(row.thread_nodes, [0].into_iter().collect());
        assert!(row.bytes_by_node.as_ref().is_some_and(|b| b.values().sum::<u64>() > 0));
        assert_eq!(row.remote_bytes, Some(0));
    }
}
