//! One way to name a process: `-p PID` / `--pid PID`, as perf and pidstat
//! take it, with the bare `PID` kept for the commands that always took it.

use clap::Args;

#[derive(Debug, Clone, Args)]
#[group(required = true, multiple = false)]
pub struct PidArg {
    /// The process (1 to 4194304); the same as -p PID.
    #[arg(value_name = "PID", value_parser = crate::bounds::pid)]
    positional: Option<u32>,
    /// The process (1 to 4194304).
    #[arg(short = 'p', long = "pid", value_name = "PID", value_parser = crate::bounds::pid)]
    flag: Option<u32>,
}

impl PidArg {
    /// The PID given one way or the other (clap requires exactly one; 0,
    /// which no process has, stands for "none" and is refused downstream).
    pub fn get(&self) -> u32 {
        self.flag.or(self.positional).unwrap_or(0)
    }
}
