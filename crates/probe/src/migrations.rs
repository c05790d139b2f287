//! Collecting thread moves for `migrations` and `doctor --pid`: the
//! tracepoint when it can be used, else polling each task's `stat`, with
//! the reason the tracepoint could not be used.
//!
//! numasleuth never mounts tracefs itself (no system change without
//! `--apply`): it looks for the tracepoint where tracefs usually is and
//! says how to mount it.

use std::collections::{HashMap, HashSet};
use std::time::{Duration, Instant};

use crate::migrate::{self, MAX_MOVES_PER_TASK, MAX_TASKS};
use crate::tracepoint;
use numasleuth_kernel::procfs::settings;
use numasleuth_kernel::task;
use numasleuth_kernel::tracefs::migrate::MigrateLayout;
use numasleuth_kernel::tracefs::FormatError;
use numasleuth_kernel::Root;
use numasleuth_model::migrations::{Method, MoveCounter, NumaBalancing, TaskNuma, ThreadPath};
use numasleuth_model::stop::Stop;
use thiserror::Error;

pub use crate::tracepoint::TRACEFS;
const EVENT: &str = "sched/sched_migrate_task";
/// Ring buffer per CPU: 256 KiB holds ~10,000 moves between two drains.
const RING_PAGES: usize = 64;

/// Which tasks are followed.
#[derive(Debug, Clone, Copy)]
pub enum Scope {
    Process(u32),
    All,
}

pub struct Collected {
    pub method: Method,
    pub paths: Vec<ThreadPath>,
    pub duration_s: f64,
    pub notes: Vec<String>,
}

/// Why the `sched_migrate_task` tracepoint cannot be used (the I/O errors
/// are fields, not `#[source]`s: their text is in the message already).
#[derive(Debug, Error)]
pub enum TracedError {
    #[error(transparent)]
    Find(#[from] tracepoint::FindError),
    #[error(transparent)]
    Format(#[from] FormatError),
    #[error("tracefs has no sched/sched_migrate_task event (a kernel without it)")]
    NoEvent,
    #[error(
        "perf refused the system-wide tracepoint ({error}): kernel.perf_event_paranoid is {} \
         (/proc/sys/kernel/perf_event_paranoid); it needs root/CAP_PERFMON or \
         `sysctl kernel.perf_event_paranoid=-1`",
        crate::error::paranoid_shown(*paranoid)
    )]
    Refused {
        error: std::io::Error,
        paranoid: Option<i32>,
    },
    #[error("perf_event_open of sched:sched_migrate_task: {error}")]
    Open { error: std::io::Error },
}

/// The tracepoint's id and layout, or why it cannot be used.
pub fn find_tracepoint(root: &Root) -> Result<(u64, MigrateLayout), TracedError> {
    match tracepoint::find(root, EVENT)? {
        Some(found) => Ok((found.id, MigrateLayout::parse(&found.format)?)),
        None => Err(TracedError::NoEvent),
    }
}

/// Watches moves for `duration` (or until `stop`) with the tracepoint, or
/// says why not.
pub fn traced(
    root: &Root,
    scope: Scope,
    cpus: &[u32],
    duration: Duration,
    stop: &Stop,
) -> Result<Collected, TracedError> {
    let (id, layout) = find_tracepoint(root)?;
    let mut samplers = migrate::open(id, cpus, RING_PAGES).map_err(|error| match error.raw_os_error() {
        Some(libc::EACCES) | Some(libc::EPERM) => TracedError::Refused {
            error,
            paranoid: settings::perf_event_paranoid(root),
        },
        _ => TracedError::Open { error },
    })?;
    let mut members = Membership::new(root, scope);
    let raw = migrate::collect(&mut samplers, &layout, duration, &mut |tid| members.contains(tid), stop);
    let mut notes = Vec::new();
    if raw.lost_records > 0 {
        notes.push(format!(
            "{} tracepoint records lost (full ring buffer): counts are lower bounds",
            raw.lost_records
        ));
    }
    if raw.tasks_dropped > 0 {
        notes.push(format!(
            "moves of more than {MAX_TASKS} tasks: {} left out",
            raw.tasks_dropped
        ));
    }
    let paths = raw
        .tasks
        .into_iter()
        .map(|t| ThreadPath {
            tid: t.tid,
            comm: t.comm,
            moves: t.moves,
            path: t.path,
        })
        .collect();
    Ok(Collected {
        method: Method::Tracepoint,
        paths: with_still_threads(root, scope, paths),
        duration_s: raw.duration_s,
        notes,
    })
}

/// Whether a task id belongs to the process, remembered both ways so a
/// busy machine does not cost a lookup per move.
struct Membership<'r> {
    root: &'r Root,
    scope: Scope,
    known: HashMap<u32, bool>,
}

impl<'r> Membership<'r> {
    fn new(root: &'r Root, scope: Scope) -> Self {
        Membership {
            root,
            scope,
            known: HashMap::new(),
        }
    }

    fn contains(&mut self, tid: u32) -> bool {
        let Scope::Process(pid) = self.scope else {
            return true;
        };
        if let Some(known) = self.known.get(&tid) {
            return *known;
        }
        let member = task::is_thread_of(self.root, pid, tid);
        if self.known.len() < MAX_TASKS {
            self.known.insert(tid, member);
        }
        member
    }
}

/// For a process, its threads that never moved are listed too (with 0).
fn with_still_threads(root: &Root, scope: Scope, mut paths: Vec<ThreadPath>) -> Vec<ThreadPath> {
    let Scope::Process(pid) = scope else {
        return paths;
    };
    let moved: HashSet<u32> = paths.iter().map(|p| p.tid).collect();
    for (tid, comm, _) in task_cpus(root, pid) {
        if !moved.contains(&tid) {
            paths.push(ThreadPath {
                tid,
                comm,
                moves: 0,
                path: Vec::new(),
            });
        }
    }
    paths
}

/// Each live thread's id, name and current CPU; threads whose `stat`
/// cannot be read are left out of this sampled view.
fn task_cpus(root: &Root, pid: u32) -> Vec<(u32, String, Option<u32>)> {
    let Ok(Some(read)) = task::threads(root, pid, MAX_TASKS) else {
        return Vec::new();
    };
    read.threads
        .into_iter()
        .map(|thread| (thread.tid, thread.stat.comm, thread.stat.processor))
        .collect()
}

/// Every task of the machine (`--all`), from `/proc`.
fn all_task_cpus(root: &Root) -> Vec<(u32, String, Option<u32>)> {
    let Ok(Some(pids)) = root.list("proc") else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for pid in pids.iter().filter_map(|p| p.parse::<u32>().ok()) {
        out.extend(task_cpus(root, pid));
        if out.len() >= MAX_TASKS {
            break;
        }
    }
    out
}

/// What a sampled view polls, how often and for how long.
pub struct Polling {
    pub duration: Duration,
    pub interval: Duration,
    /// Why the tracepoint was not used.
    pub reason: String,
}

/// Polls `stat`'s `processor` every `interval` for `duration` (or until
/// `stop`): a sampled view.
pub fn sampled(root: &Root, scope: Scope, polling: Polling, stop: &Stop) -> Collected {
    let Polling {
        duration,
        interval,
        reason,
    } = polling;
    let start = Instant::now();
    let mut counter = MoveCounter::new(MAX_TASKS, MAX_MOVES_PER_TASK);
    let mut polls = 0u64;
    loop {
        let now = match scope {
            Scope::Process(pid) => task_cpus(root, pid),
            Scope::All => all_task_cpus(root),
        };
        polls += 1;
        for (tid, comm, cpu) in now {
            counter.observe(tid, &comm, cpu);
        }
        let elapsed = start.elapsed();
        if elapsed >= duration || stop.sleep(interval.min(duration - elapsed)) {
            break;
        }
    }
    Collected {
        method: Method::Sampled {
            interval_ms: interval.as_millis() as u64,
            reason,
        },
        paths: counter.paths(),
        duration_s: start.elapsed().as_secs_f64(),
        notes: vec![format!(
            "sampled view: each thread's CPU read {polls} times; a move and its return between two reads is not seen, so counts are lower bounds"
        )],
    }
}

/// AutoNUMA readings of a process's threads (sum of numa_pages_migrated).
pub fn numa_tasks(root: &Root, pid: u32) -> (Vec<TaskNuma>, Option<u64>) {
    let Ok(threads) = numasleuth_kernel::procfs::process::read_threads(root, pid) else {
        return (Vec::new(), None);
    };
    let tasks: Vec<TaskNuma> = threads
        .iter()
        .map(|t| {
            let sched = t.sched.as_ref();
            TaskNuma {
                tid: t.stat.tid,
                numa_preferred_nid: sched.and_then(|s| s.numa_preferred_nid),
                numa_pages_migrated: sched.and_then(|s| s.numa_pages_migrated),
                total_numa_faults: sched
                    .and_then(|s| s.fields.get("total_numa_faults"))
                    .and_then(|v| v.parse().ok()),
                mems_allowed: t.allowed_mems.as_ref().map(|m| m.to_string()),
            }
        })
        .collect();
    let values: Vec<u64> = tasks.iter().filter_map(|t| t.numa_pages_migrated).collect();
    let sum = (!values.is_empty()).then(|| values.iter().sum());
    (tasks, sum)
}

/// System-wide pages migrated (`--all`), from /proc/vmstat.
pub fn vmstat_pages_migrated(root: &Root) -> Option<u64> {
    settings::read_vmstat(root).ok()?.get("numa_pages_migrated").copied()
}

/// The state before, completed after the observation.
pub fn numa_balancing(root: &Root, scope: Scope, before: Option<u64>) -> NumaBalancing {
    let mode = settings::read_numa_balancing(root)
        .ok()
        .flatten()
        .and_then(|m| u32::try_from(m).ok());
    let (tasks, after) = match scope {
        Scope::Process(pid) => numa_tasks(root, pid),
        Scope::All => (Vec::new(), vmstat_pages_migrated(root)),
    };
    NumaBalancing {
        mode,
        tasks,
        pages_migrated_before: before,
        pages_migrated_after: after,
    }
}
