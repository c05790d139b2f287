//! One way to name a process: `-p PID` / `--pid PID`, as perf and pidstat
//! take it, with the bare `PID` kept for the commands that always took it.
//! Wherever a PID is taken, a process name is too (`-p postgres`, as
//! `numastat -p` and `pgrep` take one): clap only checks what was typed
//! ([`process`]); once the root is open, [`resolve`] turns a name into the
//! one PID whose `comm` it is, in the live system or the snapshot, and
//! refuses a name that matches none or several, listing them.

use anyhow::bail;
use clap::Args;
use numasleuth_kernel::procfs::process::read_process_stat;
use numasleuth_kernel::procfs::processes::{cmdline, find_by_comm, COMM_PATTERN};
use numasleuth_kernel::{Gaps, Root};

/// The kernel keeps the first 15 bytes of a program's name as its `comm`.
const COMM_BYTES: usize = 15;
/// A name longer than this is not a process name.
const NAME_MAX_BYTES: usize = 256;
/// Processes one command line may name (`snapshot -p`, `serve --pid`,
/// `top -p` repeat the flag): each name costs a walk of /proc, so the count
/// is refused before any is looked up.
pub const MAX_PROCESSES_NAMED: usize = 64;
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

/// The value parser of every PID argument: digits are a PID (1 to
/// 4194304), anything else a process name to look up once the root is
/// open.
pub fn process(text: &str) -> Result<ProcessRef, String> {
    if !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit()) {
        return crate::bounds::pid(text).map(ProcessRef::Pid);
    }
    if text.is_empty() {
        return Err("a process id (1 to 4194304) or a process name is needed".into());
    }
    if text.len() > NAME_MAX_BYTES {
        return Err(format!(
            "a process name of {} bytes; the kernel keeps {COMM_BYTES}, so at most {NAME_MAX_BYTES} is taken",
            text.len()
        ));
    }
    if text.starts_with('-') || text.chars().any(|c| c.is_control() || c == '/') {
        return Err(format!(
            "`{}` is not a process id (1 to 4194304) or name (names start with no `-` and hold no `/` or \
             control characters)",
            text.escape_debug()
        ));
    }
    Ok(ProcessRef::Name(text.to_string()))
}

/// [`resolve`] for every process a command line names, refusing more than
/// [`MAX_PROCESSES_NAMED`] before looking any up.
pub fn resolve_all(root: &Root, processes: Vec<&mut ProcessRef>) -> anyhow::Result<()> {
    if processes.len() > MAX_PROCESSES_NAMED {
        bail!("{} --pid given; at most {MAX_PROCESSES_NAMED}", processes.len());
    }
    for process in processes {
        resolve(root, process)?;
    }
    Ok(())
}

/// Turns a name into the one PID whose `comm` matches it (the name cut to
/// the kernel's 15 bytes), leaving a PID as it is. This process itself is
/// never a match on the live system, as `pgrep` leaves itself out, and
/// neither is a zombie.
pub fn resolve(root: &Root, process: &mut ProcessRef) -> anyhow::Result<()> {
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
    let unreadable = gaps
        .first()
        .map_or(String::new(), |e| format!(" ({e}; run as root to see every process)"));
    match pids[..] {
        [pid] => {
            *process = ProcessRef::Pid(pid);
            Ok(())
        }
        [] if !root.is_live() => {
            let held = super::snapshot::captured_processes(root);
            let held = if held.is_empty() {
                "no process".to_string()
            } else {
                listing(root, &held)
            };
            bail!("`{name}` is not in this snapshot; it holds: {held}")
        }
        [] => bail!("no process is named `{name}` (its {COMM_PATTERN} would read `{key}`){unreadable}"),
        _ => bail!(
            "`{name}` names {} processes: {}; give one with -p PID",
            pids.len(),
            listing(root, &pids)
        ),
    }
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

#[derive(Debug, Clone, Args)]
#[group(required = true, multiple = false)]
pub struct PidArg {
    /// The process: a PID (1 to 4194304) or a name; the same as -p.
    #[arg(value_name = "PID", value_parser = process)]
    positional: Option<ProcessRef>,
    /// The process: a PID (1 to 4194304) or a name (its comm, as pgrep
    /// matches it; a name that matches several processes is refused with
    /// their list).
    #[arg(short = 'p', long = "pid", value_name = "PID", value_parser = process)]
    flag: Option<ProcessRef>,
}

impl PidArg {
    /// The PID given one way or the other (clap requires exactly one; 0,
    /// which no process has, stands for "none" and is refused downstream).
    pub fn get(&self) -> u32 {
        self.flag
            .as_ref()
            .or(self.positional.as_ref())
            .map_or(0, ProcessRef::pid)
    }

    /// The process as typed, for [`resolve`].
    pub fn typed_mut(&mut self) -> Option<&mut ProcessRef> {
        self.flag.as_mut().or(self.positional.as_mut())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn digits_are_pids_and_the_rest_names() {
        assert_eq!(process("42"), Ok(ProcessRef::Pid(42)));
        assert!(process("0").is_err());
        assert!(process("99999999999").is_err());
        assert_eq!(process("postgres"), Ok(ProcessRef::Name("postgres".into())));
        assert_eq!(process("kworker-1x"), Ok(ProcessRef::Name("kworker-1x".into())));
        for bad in ["", "a/b", "tab\there", "-1", &"x".repeat(300)] {
            assert!(process(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn long_names_are_cut_like_the_kernel_cuts_comm() {
        assert_eq!(comm_of("my-long-program-name"), "my-long-program");
        assert_eq!(comm_of("short"), "short");
        // 14 ASCII bytes then a two-byte character: cut before it.
        assert_eq!(comm_of("abcdefghijklmné"), "abcdefghijklmn");
    }
}
