//! One refresh of `top`'s live view: per node CPU use and free memory
//! against the watermarks, machine-wide reclaim rates, and the processes
//! with remote memory or moving threads. Collected in cli's refresh loop,
//! drawn by `report::top_view`.

use std::collections::{BTreeMap, BTreeSet};

#[derive(Debug, Clone, PartialEq)]
pub struct NodeRow {
    pub node: u32,
    pub cpus: String,
    pub cpu_util_percent: Option<f64>,
    pub free_bytes: Option<u64>,
    pub min_bytes: Option<u64>,
    pub low_bytes: Option<u64>,
    pub high_bytes: Option<u64>,
    pub numa_miss_per_sec: Option<f64>,
    pub numa_foreign_per_sec: Option<f64>,
}

#[derive(Debug, Clone, Default, PartialEq)]
pub struct Frame {
    pub nodes: Vec<NodeRow>,
    /// Machine-wide (the kernel counts reclaim per machine in /proc/vmstat).
    pub kswapd_scan_per_sec: Option<f64>,
    pub direct_scan_per_sec: Option<f64>,
    pub allocstall_per_sec: Option<f64>,
    pub procs: Vec<ProcRow>,
    pub notes: Vec<String>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct ProcRow {
    pub pid: u32,
    pub comm: String,
    pub threads: usize,
    /// Nodes its threads last ran on.
    pub thread_nodes: BTreeSet<u32>,
    /// Resident bytes per node at the last numa_maps reading.
    pub bytes_by_node: Option<BTreeMap<u32, u64>>,
    /// Bytes on nodes where none of its threads run.
    pub remote_bytes: Option<u64>,
    /// Threads seen on another CPU / node than at the last refresh.
    pub cpu_moves: u64,
    pub node_moves: u64,
    /// CPU time used since the previous refresh, in percent of one CPU
    /// (as top's %CPU: a process busy on two CPUs reads 200); `None` at
    /// its first refresh, as a reused PID, or when its stat was unreadable.
    pub cpu_percent: Option<f64>,
}

impl ProcRow {
    /// Resident bytes on every node, at the last numa_maps reading.
    pub fn resident_bytes(&self) -> Option<u64> {
        self.bytes_by_node.as_ref().map(|b| b.values().sum())
    }
}

/// One process as `top`'s process scan read it, before any derivation:
/// where its threads run now and ran at the previous refresh, and its
/// memory per node at its last numa_maps reading. `analyze::top` turns it
/// into a [`ProcRow`].
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ProcReading {
    pub pid: u32,
    pub comm: String,
    /// `(tid, cpu)` of each thread read, from `stat`'s `processor`.
    pub thread_cpus: Vec<(u32, u32)>,
    /// `tid → cpu` at the previous refresh of the same process (empty when
    /// it is new, or its PID was reused).
    pub thread_cpus_before: std::collections::HashMap<u32, u32>,
    /// Resident bytes per node at the last numa_maps reading (which may be
    /// a few refreshes old; `None` before the first or when unreadable).
    pub bytes_by_node: Option<BTreeMap<u32, u64>>,
    /// CPU time of all its threads (`utime` + `stime` of `/proc/PID/stat`),
    /// in clock ticks; `None` when unreadable.
    pub cpu_ticks: Option<u64>,
    /// Its CPU time at the previous refresh (`None` when it is new, its PID
    /// was reused, or the ticks were unreadable then).
    pub cpu_before: Option<CpuBefore>,
}

/// A process's CPU time at the previous refresh, and how long ago that
/// reading was: the two halves of its CPU% besides the ticks now.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CpuBefore {
    pub cpu_ticks: u64,
    pub elapsed_s: f64,
}
