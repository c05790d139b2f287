//! Thread moves and AutoNUMA state as the collectors saw them: handed from
//! `probe::migrations` (the tracepoint or polled `stat`) and `top` to
//! `analyze::migrations`, which counts node changes and judges them.

use std::collections::BTreeMap;

use serde::ser::SerializeStruct;
use serde::{Serialize, Serializer};

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum Method {
    /// `sched:sched_migrate_task` through perf: every move.
    Tracepoint,
    /// `/proc/PID/task/*/stat` polled: moves shorter than the interval are
    /// missed, so counts are lower bounds.
    Sampled { interval_ms: u64, reason: String },
}

/// One thread's moves, in order, as a collector saw them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ThreadPath {
    pub tid: u32,
    pub comm: String,
    /// Every move counted (may exceed `path` when it was capped).
    pub moves: u64,
    /// (from CPU, to CPU).
    pub path: Vec<(u32, u32)>,
}

/// One task's AutoNUMA state from `/proc/PID/task/TID/sched` and `status`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct TaskNuma {
    pub tid: u32,
    pub numa_preferred_nid: Option<u32>,
    pub numa_pages_migrated: Option<u64>,
    pub total_numa_faults: Option<u64>,
    pub mems_allowed: Option<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NumaBalancing {
    /// `kernel.numa_balancing` (0 off, 1 on, 2 memory tiering, 3 both).
    pub mode: Option<u32>,
    /// Read after the observation.
    pub tasks: Vec<TaskNuma>,
    /// Sum over tasks before and after; `None` when no task reports it
    /// (a kernel without CONFIG_NUMA_BALANCING).
    pub pages_migrated_before: Option<u64>,
    pub pages_migrated_after: Option<u64>,
}

impl NumaBalancing {
    pub fn pages_migrated_during(&self) -> Option<u64> {
        Some(self.pages_migrated_after?.saturating_sub(self.pages_migrated_before?))
    }
}

/// By hand so the derived `pages_migrated_during` follows the readings it
/// comes from, from its one definition above.
impl Serialize for NumaBalancing {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut state = serializer.serialize_struct("NumaBalancing", 5)?;
        state.serialize_field("mode", &self.mode)?;
        state.serialize_field("tasks", &self.tasks)?;
        state.serialize_field("pages_migrated_before", &self.pages_migrated_before)?;
        state.serialize_field("pages_migrated_after", &self.pages_migrated_after)?;
        state.serialize_field("pages_migrated_during", &self.pages_migrated_during())?;
        state.end()
    }
}

/// Thread moves from successive readings of each thread's CPU (`stat`'s
/// `processor`): what the sampled view of `migrations` uses, and what a
/// periodic view such as `top` can feed each refresh. Bounded: at most
/// `max_threads` threads and `max_moves` moves kept per thread, and
/// [`MAX_MOVES_KEPT`] over all of them; past that moves are only counted
/// (the paths say they were truncated).
#[derive(Debug, Clone, Default)]
pub struct MoveCounter {
    last_cpu: BTreeMap<u32, u32>,
    paths: BTreeMap<u32, ThreadPath>,
    max_threads: usize,
    max_moves: usize,
    kept: usize,
}

/// Moves kept over all threads (32 MiB of CPU pairs).
pub const MAX_MOVES_KEPT: usize = 1 << 22;

impl MoveCounter {
    pub fn new(max_threads: usize, max_moves: usize) -> Self {
        MoveCounter {
            max_threads,
            max_moves,
            ..Default::default()
        }
    }

    /// One reading of one thread; a change of CPU since its last reading
    /// is one move.
    pub fn observe(&mut self, tid: u32, comm: &str, cpu: Option<u32>) {
        if !self.paths.contains_key(&tid) && self.paths.len() >= self.max_threads {
            return;
        }
        let path = self.paths.entry(tid).or_insert_with(|| ThreadPath {
            tid,
            comm: comm.to_string(),
            moves: 0,
            path: Vec::new(),
        });
        let Some(cpu) = cpu else { return };
        if let Some(before) = self.last_cpu.insert(tid, cpu).filter(|b| *b != cpu) {
            path.moves += 1;
            if path.path.len() < self.max_moves && self.kept < MAX_MOVES_KEPT {
                path.path.push((before, cpu));
                self.kept += 1;
            }
        }
    }

    pub fn paths(&self) -> Vec<ThreadPath> {
        self.paths.values().cloned().collect()
    }
}
