//! One way to find the process a user named, by PID or by name, on the
//! live system or in a snapshot. Every command that takes a process goes
//! through [`resolve`] (a name becomes the one PID whose `comm` it is) and
//! [`process_stat`] (the process is there; in a snapshot that lacks it,
//! which ones it holds); `snapshot -p` asks [`existing_pids`], which is
//! the two together. What was typed is checked by [`ProcessRef`]'s
//! `FromStr` (clap's value parser in cli) before anything is looked up.

use numasleuth_kernel::procfs::process::{read_process_stat, ProcessError};
use numasleuth_kernel::procfs::processes::{cmdline, find_by_comm, COMM_PATTERN};
use numasleuth_kernel::procfs::task::TaskStat;
use numasleuth_kernel::{Gaps, IdList, ReadError, Root};

use crate::limits::PID_MAX;

/// The kernel keeps the first 15 bytes of a program's name as its `comm`.
pub const COMM_BYTES: usize = 15;
/// Processes one command line may name (`snapshot -p`, `serve --pid`,
/// `top -p` repeat the flag): each name costs a walk of /proc, so the count
/// is refused before any is looked up.
pub const MAX_PROCESSES_NAMED: usize = 64;
/// A name longer than this is not a process name.
const NAME_MAX_BYTES: usize = 256;
/// Matches listed in the error when a name is ambiguous.
const MATCHES_SHOWN: usize = 8;
/// Characters of a match's command line shown in that list.
const CMDLINE_SHOWN_CHARS: usize = 60;

/// A process as typed: its PID, or a name to look up.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ProcessRef {
    Pid(u32),
    Name(String),
}

impl ProcessRef {
    /// The PID; 0 (which no process has, and which is refused downstream)
    /// for a name not yet resolved.
    pub fn pid(&self) -> u32 {
        match self {
            ProcessRef::Pid(pid) => *pid,
            ProcessRef::Name(_) => 0,
        }
    }
}

/// Why typed text names no process.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ProcessTextError {
    #[error(transparent)]
    Pid(#[from] numasleuth_parse::typed::TypedError),
    #[error("a process id (1 to {PID_MAX}) or a process name is needed")]
    Empty,
    #[error("a process name of {bytes} bytes; the kernel keeps {COMM_BYTES}, so at most {NAME_MAX_BYTES} is taken")]
    TooLong { bytes: usize },
    #[error(
        "`{shown}` is not a process id (1 to {PID_MAX}) or name (names start with no `-` and hold no `/` or \
         control characters)"
    )]
    NotAName { shown: String },
}

/// Digits are a PID (1 to 4194304), anything else a process name to look
/// up once the root is open.
impl std::str::FromStr for ProcessRef {
    type Err = ProcessTextError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        if !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit()) {
            return Ok(ProcessRef::Pid(crate::limits::text::pid(text)?));
        }
        if text.is_empty() {
            return Err(ProcessTextError::Empty);
        }
        if text.len() > NAME_MAX_BYTES {
            return Err(ProcessTextError::TooLong { bytes: text.len() });
        }
        if text.starts_with('-') || text.chars().any(|c| c.is_control() || c == '/') {
            return Err(ProcessTextError::NotAName {
                shown: text.escape_debug().to_string(),
            });
        }
        Ok(ProcessRef::Name(text.to_string()))
    }
}

/// Why a named process could not be found.
#[derive(Debug, thiserror::Error)]
pub enum ResolveError {
    #[error("{given} --pid given; at most {MAX_PROCESSES_NAMED}")]
    TooMany { given: usize },
    #[error(transparent)]
    Unlisted(#[from] ReadError),
    #[error("`{name}` is not in this snapshot; it holds: {held}")]
    NameNotInSnapshot { name: String, held: String },
    #[error("no process is named `{name}` (its {COMM_PATTERN} would read `{key}`){unreadable}")]
    NoMatch {
        name: String,
        key: String,
        unreadable: String,
    },
    #[error("`{name}` names {count} processes: {listing}; give one with -p PID")]
    Ambiguous {
        name: String,
        count: usize,
        listing: String,
    },
    #[error(transparent)]
    Missing(#[from] MissingError),
}

/// A PID whose process is not there.
#[derive(Debug, thiserror::Error)]
pub enum MissingError {
    #[error(
        "process {pid} is not in this snapshot: the snapshot holds {holds}; take one with \
         `numasleuth snapshot -p {pid} -o FILE` on the machine it runs on"
    )]
    NotInSnapshot { pid: u32, holds: String },
    #[error(transparent)]
    Unreadable(#[from] ProcessError),
}

/// [`resolve`] for every process a command line names, refusing more than
/// [`MAX_PROCESSES_NAMED`] before looking any up.
pub fn resolve_all(root: &Root, processes: Vec<&mut ProcessRef>) -> Result<(), ResolveError> {
    if processes.len() > MAX_PROCESSES_NAMED {
        return Err(ResolveError::TooMany { given: processes.len() });
    }
    for process in processes {
        resolve(root, process)?;
    }
    Ok(())
}

/// The processes `given` names, each resolved and checked to be there
/// ([`process_stat`]), in the order given, duplicates dropped (their
/// count is capped by [`resolve_all`]).
pub fn existing_pids(root: &Root, given: &[ProcessRef]) -> Result<Vec<u32>, ResolveError> {
    let mut pids = Vec::new();
    for process in given {
        let mut process = process.clone();
        resolve(root, &mut process)?;
        let pid = process.pid();
        process_stat(root, pid)?;
        if !pids.contains(&pid) {
            pids.push(pid);
        }
    }
    Ok(pids)
}

/// Turns a name into the one PID whose `comm` matches it (the name cut to
/// the kernel's 15 bytes), leaving a PID as it is. This process itself is
/// never a match on the live system, as `pgrep` leaves itself out, and
/// neither is a zombie.
pub fn resolve(root: &Root, process: &mut ProcessRef) -> Result<(), ResolveError> {
    let ProcessRef::Name(name) = process else {
        return Ok(());
    };
    let key = comm_of(name);
    let mut gaps = Gaps::default();
    let mut pids = find_by_comm(root, key, &mut gaps)?;
    if root.is_live() {
        pids.retain(|&pid| pid != std::process::id());
    }
    // A process that exited while we looked, or a zombie, has nothing to
    // inspect: only the living count (as they would for `inspect PID`).
    pids.retain(|&pid| read_process_stat(root, pid).is_ok_and(|stat| stat.state != 'Z'));
    pids.sort_unstable();
    let name = name.clone();
    match pids[..] {
        [pid] => {
            *process = ProcessRef::Pid(pid);
            Ok(())
        }
        [] if !root.is_live() => {
            let held = captured_processes(root);
            let held = if held.is_empty() {
                "no process".to_string()
            } else {
                listing(root, &held)
            };
            Err(ResolveError::NameNotInSnapshot { name, held })
        }
        [] => Err(ResolveError::NoMatch {
            key: key.to_string(),
            name,
            unreadable: gaps
                .first()
                .map_or(String::new(), |e| format!(" ({e}; run as root to see every process)")),
        }),
        _ => Err(ResolveError::Ambiguous {
            count: pids.len(),
            listing: listing(root, &pids),
            name,
        }),
    }
}

/// Reads a process's `stat`, saying, when `root` is a snapshot that lacks
/// the process, which processes it does hold and how to capture one.
pub fn process_stat(root: &Root, pid: u32) -> Result<TaskStat, MissingError> {
    match read_process_stat(root, pid) {
        Err(ProcessError::NoSuchProcess { .. }) if !root.is_live() => {
            let held = captured_processes(root);
            let holds = if held.is_empty() {
                "no process".to_string()
            } else {
                format!("processes {}", IdList::new(held))
            };
            Err(MissingError::NotInSnapshot { pid, holds })
        }
        other => Ok(other?),
    }
}

/// The processes a snapshot holds: those whose `stat` it captured.
pub fn captured_processes(root: &Root) -> Vec<u32> {
    let Ok(Some(entries)) = root.list("proc") else {
        return Vec::new();
    };
    let mut pids: Vec<u32> = entries
        .iter()
        .filter_map(|e| e.parse().ok())
        .filter(|pid| numasleuth_kernel::task::process_exists(root, *pid))
        .collect();
    pids.sort_unstable();
    pids
}

/// `412 (postgres -D /var/lib/pg), 413 (…)`, the first few.
fn listing(root: &Root, pids: &[u32]) -> String {
    let mut shown: Vec<String> = pids
        .iter()
        .take(MATCHES_SHOWN)
        .map(|&pid| match cmdline(root, pid) {
            Some(line) => {
                let line = numasleuth_kernel::error::quote(&line);
                let cut: String = line.chars().take(CMDLINE_SHOWN_CHARS).collect();
                let more = if cut.len() < line.len() { "…" } else { "" };
                format!("{pid} ({cut}{more})")
            }
            None => pid.to_string(),
        })
        .collect();
    if pids.len() > MATCHES_SHOWN {
        shown.push(format!("and {} more", pids.len() - MATCHES_SHOWN));
    }
    shown.join(", ")
}

/// The name as the kernel stores it: at most 15 bytes, cut at a character.
fn comm_of(name: &str) -> &str {
    let mut end = name.len().min(COMM_BYTES);
    while !name.is_char_boundary(end) {
        end -= 1;
    }
    &name[..end]
}

#[cfg(test)]
#[path = "process_ref_tests.rs"]
mod tests;
