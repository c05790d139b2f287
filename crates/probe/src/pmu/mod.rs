//! Counting every event we can, on a running process or on a command we
//! start, and saying which events could not be opened and the errno why.
//!
//! Each event is its own perf event (never a group), opened with `inherit`
//! so threads and children created later are counted into it. When there
//! are more hardware events than counters the kernel rotates them every
//! `perf_event_mux_interval_ms`; `time_enabled_ns` and `time_running_ns`
//! tell how long each was wanted and how long it really counted, and
//! `analyze` scales from them. This module only returns raw readings.
//!
//! A command is forked stopped, every event is attached with
//! `enable_on_exec`, and only then does it run (see `spawn`). A running
//! process gets one event per thread listed in `/proc/PID/task` (the live
//! `/proc`: perf needs the live system); threads those threads create
//! afterwards are inherited.

pub use numasleuth_model::perf::catalog;
pub(crate) mod open;
pub mod spawn;
mod spawn_error;

use std::ffi::OsString;
use std::time::{Duration, Instant};

use numasleuth_model::stop::Stop;
use perf_event::Counter;
use thiserror::Error;

pub use numasleuth_model::perf::pmu::{EventRaw, EventSpec, OpenFailure, PmuRaw, Reading, TargetRaw, MAX_COUNTERS};
use open::{for_each_counter, kernel_allowed, open_all, raise_fd_limit, read_all, Attach};

#[derive(Debug, Clone)]
pub enum Target {
    Pid {
        pid: u32,
        /// `None`: until stopped.
        duration: Option<Duration>,
    },
    /// `argv[0]` is looked up on PATH.
    Command { argv: Vec<OsString> },
}

#[derive(Debug, Clone)]
pub struct CountSpec {
    pub target: Target,
    pub events: Vec<EventSpec>,
    /// Threads of a running process attached at most (each costs one
    /// descriptor per event).
    pub max_threads: usize,
}

#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum PmuError {
    #[error("no such process: {pid} (it does not exist or has exited)")]
    NoSuchProcess { pid: u32 },
    #[error("cannot run `{program}`: {why}")]
    Command { program: String, why: String },
    #[error("{0}")]
    Io(String),
}

/// How often a watched process is checked for having exited.
const POLL: Duration = Duration::from_millis(20);

/// Counts the target: a process for its duration or until `stop` is
/// requested (what was counted until then is returned), or a command until
/// it exits.
/// Counts until the target ends: a process for its duration or until
/// `stop`; a command until it exits, `stop` passing SIGINT on to its
/// process group (Ctrl-C reaches numasleuth, not the command's group).
pub fn count(spec: &CountSpec, stop: &Stop) -> Result<PmuRaw, PmuError> {
    let fd_limit = raise_fd_limit();
    match &spec.target {
        Target::Pid { pid, duration } => count_pid(spec, *pid, (*duration, stop), fd_limit),
        Target::Command { argv } => count_command(spec, argv, fd_limit, stop),
    }
}

/// Threads attached at most: the caller's cap, and no more than
/// [`MAX_COUNTERS`] counters in all; always at least one.
pub fn threads_to_attach(max_threads: usize, events: usize) -> usize {
    max_threads.min(MAX_COUNTERS / events.max(1)).max(1)
}

fn count_pid(
    spec: &CountSpec,
    pid: u32,
    (duration, stop): (Option<Duration>, &Stop),
    fd_limit: u64,
) -> Result<PmuRaw, PmuError> {
    let listed = crate::live_threads::thread_ids(pid).ok_or(PmuError::NoSuchProcess { pid })?;
    let attached_tids: Vec<u32> = listed
        .iter()
        .copied()
        .take(threads_to_attach(spec.max_threads, spec.events.len()))
        .collect();
    let how = Attach {
        include_kernel: kernel_allowed(attached_tids[0] as libc::pid_t, false),
        enable_on_exec: false,
    };
    let mut opened = open_all(&spec.events, &attached_tids, how);
    let any_open = opened.iter().any(|o| o.as_ref().is_ok_and(|c| !c.is_empty()));
    let all_gone = opened
        .iter()
        .all(|o| matches!(o, Err(e) if e.raw_os_error() == Some(libc::ESRCH)));
    if !any_open && all_gone {
        return Err(PmuError::NoSuchProcess { pid });
    }
    let after = crate::live_threads::thread_ids(pid).unwrap_or_default();
    let started_meanwhile = after.iter().filter(|t| listed.binary_search(t).is_err()).count();
    for_each_counter(&mut opened, Counter::enable);
    let start = Instant::now();
    let deadline = match duration {
        Some(d) => Some(
            start
                .checked_add(d)
                .ok_or_else(|| PmuError::Io(format!("a count of {} s cannot be scheduled", d.as_secs())))?,
        ),
        None => None,
    };
    let mut exited = false;
    loop {
        let now = Instant::now();
        if deadline.is_some_and(|d| now >= d) || stop.requested() {
            break;
        }
        if crate::live_threads::has_ended(pid) {
            exited = true;
            break;
        }
        stop.sleep(deadline.map_or(POLL, |d| POLL.min(d - now)));
    }
    let elapsed = start.elapsed();
    let threads_attached = {
        let mut tids: Vec<u32> = opened.iter().flatten().flatten().map(|(t, _)| *t).collect();
        tids.sort_unstable();
        tids.dedup();
        tids.len()
    };
    let (counted, failed) = read_all(&spec.events, opened);
    Ok(PmuRaw {
        target: TargetRaw::Pid {
            pid,
            threads_listed: listed.len(),
            threads_attached,
            threads_not_attached: listed.len() - attached_tids.len(),
            threads_started_while_attaching: started_meanwhile,
            process_exited: exited,
        },
        duration_ns: elapsed.as_nanos().min(u128::from(u64::MAX)) as u64,
        counted,
        failed,
        kernel_included: how.include_kernel,
        fd_limit,
    })
}

fn count_command(spec: &CountSpec, argv: &[OsString], fd_limit: u64, stop: &Stop) -> Result<PmuRaw, PmuError> {
    let name = argv.first().ok_or_else(|| PmuError::Io("no command given".into()))?;
    let shown = name.to_string_lossy().into_owned();
    let command_error = |why: String| PmuError::Command {
        program: shown.clone(),
        why,
    };
    let program =
        spawn::resolve(name, std::env::var_os("PATH").as_deref()).map_err(|e| command_error(e.to_string()))?;
    let stopped = spawn::spawn_stopped(&program, argv).map_err(|e| command_error(e.to_string()))?;
    let child = stopped.pid;
    let how = Attach {
        include_kernel: kernel_allowed(child, true),
        enable_on_exec: true,
    };
    let opened = open_all(&spec.events, &[child as u32], how);
    let start = Instant::now();
    let pid = stopped.release().map_err(|e| command_error(e.to_string()))?;
    let ended = spawn::wait_group(pid, stop).map_err(|e| PmuError::Io(format!("waiting for `{shown}`: {e}")))?;
    let elapsed = start.elapsed();
    let (counted, failed) = read_all(&spec.events, opened);
    Ok(PmuRaw {
        target: TargetRaw::Command {
            argv: argv.iter().map(|a| a.to_string_lossy().into_owned()).collect(),
            pid: pid as u32,
            exit_code: ended.exit_code,
            signal: ended.signal,
        },
        duration_ns: elapsed.as_nanos().min(u128::from(u64::MAX)) as u64,
        counted,
        failed,
        kernel_included: how.include_kernel,
        fd_limit,
    })
}

#[cfg(test)]
#[path = "tests.rs"]
mod tests;
