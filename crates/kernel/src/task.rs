//! The threads of a process and each one's `stat`: the one reader of
//! `/proc/PID/task` and `/proc/PID[/task/TID]/stat` that every caller uses
//! (`inspect`, `top`, `migrations`, the perf collectors, `runs`).
//!
//! A live process may exit, or start and end threads, between any two
//! reads. That is a normal case, not an error: a thread whose `stat` is
//! gone (not found, or ESRCH from a reaped task) is left out, and a process
//! whose task directory is gone is `Ok(None)`. Every other failure (no
//! permission, a malformed file in a hostile tree) is kept for the caller,
//! who decides whether it matters. Counts are capped: no process can have
//! more threads than the kernel has PIDs ([`MAX_THREADS`]), and each file
//! read goes through [`Root::read`] and its size cap.
//!
//! The per-thread files other modules own (`status`, `sched`, `syscall`)
//! are named from [`thread_dir`], so the `task` layout is spelled here only
//! (`task_paths_tests.rs` checks that no other source file builds it).

use crate::error::ReadError;
use crate::procfs::task::{parse_stat, TaskStat};
use crate::root::Root;

/// PID_MAX_LIMIT (include/linux/threads.h): a process cannot have more
/// threads than there can be PIDs, so a longer listing is a hostile tree.
pub const MAX_THREADS: usize = 1 << 22;

/// `proc/PID/task/TID`, relative to a [`Root`].
pub fn thread_dir(pid: u32, tid: u32) -> String {
    format!("proc/{pid}/task/{tid}")
}

/// `proc/PID/stat`, relative to a [`Root`].
pub fn process_stat_path(pid: u32) -> String {
    format!("proc/{pid}/stat")
}

/// The thread ids of `pid`, lowest first; `Ok(None)` when the process is
/// gone. Names that are not numbers (a hostile tree) are skipped.
pub fn thread_ids(root: &Root, pid: u32) -> Result<Option<Vec<u32>>, ReadError> {
    let relative = format!("proc/{pid}/task");
    let Some(names) = root.list(&relative)? else {
        return Ok(None);
    };
    if names.len() > MAX_THREADS {
        return Err(ReadError::Io {
            errno: None,
            path: crate::error::display_path(&relative),
            message: format!(
                "lists {} threads, more than the kernel's {MAX_THREADS} PIDs",
                names.len()
            ),
        });
    }
    let mut tids: Vec<u32> = names.iter().filter_map(|n| n.parse().ok()).collect();
    tids.sort_unstable();
    Ok(Some(tids))
}

/// Whether thread `tid` belongs to process `pid` now.
pub fn is_thread_of(root: &Root, pid: u32, tid: u32) -> bool {
    root.exists(&thread_dir(pid, tid))
}

/// Whether a read failed because the task is gone: its file vanished, or
/// the kernel answered ESRCH for a task reaped mid-read.
pub fn is_gone(error: &ReadError) -> bool {
    matches!(
        error,
        ReadError::NotFound { .. }
            | ReadError::Io {
                errno: Some(libc::ESRCH),
                ..
            }
    )
}

fn read_stat(root: &Root, relative: &str) -> Result<Option<TaskStat>, ReadError> {
    match root.read(relative) {
        Ok(text) => parse_stat(&text)
            .map(Some)
            .map_err(|e| ReadError::malformed(relative, e.0)),
        Err(e) if is_gone(&e) => Ok(None),
        Err(e) => Err(e),
    }
}

/// `proc/PID/task/TID/stat`; `Ok(None)` when the thread has exited.
pub fn thread_stat(root: &Root, pid: u32, tid: u32) -> Result<Option<TaskStat>, ReadError> {
    read_stat(root, &format!("{}/stat", thread_dir(pid, tid)))
}

/// `proc/PID/stat`, the process as a whole; `Ok(None)` when there is no
/// such process (never was, or exited).
pub fn process_stat(root: &Root, pid: u32) -> Result<Option<TaskStat>, ReadError> {
    read_stat(root, &process_stat_path(pid))
}

/// Whether `proc/PID` has a `stat`: the process exists, perhaps as a zombie.
pub fn process_exists(root: &Root, pid: u32) -> bool {
    root.exists(&process_stat_path(pid))
}

/// Whether `pid` has ended: gone, a zombie (`Z`, not yet reaped by its
/// parent, which still lists its main thread) or dead (`X`). A `stat` that
/// cannot be read or understood counts as ended too: the process can no
/// longer be followed.
pub fn has_ended(root: &Root, pid: u32) -> bool {
    match process_stat(root, pid) {
        Ok(Some(stat)) => matches!(stat.state, 'Z' | 'X'),
        Ok(None) | Err(_) => true,
    }
}

/// One thread: its id as the task directory names it, and its `stat`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Thread {
    pub tid: u32,
    pub stat: TaskStat,
}

/// The threads of a process with their `stat`, as far as they were read.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Threads {
    /// Thread ids the listing held (before the cap).
    pub listed: usize,
    /// `stat` files read (at most the cap asked for).
    pub reads: usize,
    /// The threads read, lowest id first; those that exited meanwhile are
    /// not here.
    pub threads: Vec<Thread>,
    /// Threads whose `stat` could not be read or parsed for another reason
    /// than exiting, with the first such error.
    pub unread: usize,
    pub first_error: Option<ReadError>,
}

/// The first `max_threads` threads of `pid` (lowest ids) with their parsed
/// `stat`; `Ok(None)` when the process is gone. A thread that exits while
/// being read is left out; see [`Threads`] for the rest.
pub fn threads(root: &Root, pid: u32, max_threads: usize) -> Result<Option<Threads>, ReadError> {
    let Some(tids) = thread_ids(root, pid)? else {
        return Ok(None);
    };
    let mut out = Threads {
        listed: tids.len(),
        ..Threads::default()
    };
    for tid in tids.into_iter().take(max_threads) {
        out.reads += 1;
        match thread_stat(root, pid, tid) {
            Ok(Some(stat)) => out.threads.push(Thread { tid, stat }),
            Ok(None) => {}
            Err(e) => {
                out.unread += 1;
                out.first_error.get_or_insert(e);
            }
        }
    }
    Ok(Some(out))
}

#[cfg(test)]
#[path = "task_tests.rs"]
mod tests;

#[cfg(test)]
#[path = "task_paths_tests.rs"]
mod paths_tests;
