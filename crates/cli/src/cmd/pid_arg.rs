//! One way to name a process: `-p PID` / `--pid PID`, as perf and pidstat
//! take it, with the bare `PID` kept for the commands that always took it.
//! Wherever a PID is taken, a process name is too (`-p postgres`, as
//! `numastat -p` and `pgrep` take one): clap checks what was typed
//! ([`process`], with the application layer's rules); once the root is open, the application layer's one
//! resolver (`numasleuth_app::process_ref`) turns a name into the one PID
//! whose `comm` it is, in the live system or the snapshot, and refuses a
//! name that matches none or several, listing them.

use clap::Args;
use numasleuth_kernel::Root;

pub use numasleuth_app::process_ref::{ProcessRef, ProcessTextError};

/// The value parser of every PID argument (the application layer's rules,
/// `ProcessRef`'s `FromStr`).
pub fn process(text: &str) -> Result<ProcessRef, ProcessTextError> {
    text.parse()
}

/// Resolves every process a command line names (at most
/// `numasleuth_app::process_ref::MAX_PROCESSES_NAMED`), once the root is open.
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
