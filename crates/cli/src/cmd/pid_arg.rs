//! One way to name a process: `-p PID` / `--pid PID`, as perf and pidstat
//! take it, with the bare `PID` kept for the commands that always took it.
//! Wherever a PID is taken, a process name is too (`-p postgres`, as
//! `numastat -p` and `pgrep` take one): clap only checks what was typed
//! ([`process`]); once the root is open, the application layer's one
//! resolver (`numasleuth_app::process_ref`) turns a name into the one PID
//! whose `comm` it is, in the live system or the snapshot, and refuses a
//! name that matches none or several, listing them.

use clap::Args;
use numasleuth_app::process_ref::COMM_BYTES;
use numasleuth_kernel::Root;

pub use numasleuth_app::process_ref::{ProcessRef, MAX_PROCESSES_NAMED};

/// A name longer than this is not a process name.
const NAME_MAX_BYTES: usize = 256;

/// The value parser of every PID argument: digits are a PID (1 to
/// 4194304), anything else a process name to look up once the root is
/// open.
pub fn process(text: &str) -> Result<ProcessRef, String> {
    if !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit()) {
        return numasleuth_app::limits::text::pid(text)
            .map(ProcessRef::Pid)
            .map_err(|e| e.to_string());
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

/// Resolves every process a command line names (at most
/// [`MAX_PROCESSES_NAMED`]), once the root is open.
pub fn resolve_all(root: &Root, processes: Vec<&mut ProcessRef>) -> anyhow::Result<()> {
    Ok(numasleuth_app::process_ref::resolve_all(root, processes)?)
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

    /// The process as typed, for [`resolve_all`].
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
}
