//! Raw readings of `pmu`: which events were counted on which target, each
//! counter's value with the times it was enabled and running, and which
//! events could not be opened and why. `probe` produces them, `analyze`
//! scales and ranks them, `report` prints them.

use serde::Serialize;

/// One event to count: a generic one from [`super::catalog`] or a sysfs alias.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct EventSpec {
    pub name: String,
    /// `hardware`, `hw-cache`, `software`, or the sysfs PMU's name.
    pub pmu: String,
    pub type_id: u32,
    pub config: u64,
    pub config1: u64,
    pub config2: u64,
    pub config3: u64,
}

/// One counter's final reading.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Reading {
    pub tid: u32,
    pub value: u64,
    pub time_enabled_ns: u64,
    pub time_running_ns: u64,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct EventRaw {
    pub spec: EventSpec,
    /// One per thread it was opened on (one for a command: inherited
    /// children are summed by the kernel).
    pub readings: Vec<Reading>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct OpenFailure {
    pub spec: EventSpec,
    /// The kernel's number; `None` for a failure that was no errno.
    pub errno: Option<i32>,
    pub message: String,
}

impl OpenFailure {
    pub fn errno(&self) -> Option<super::errno::Errno> {
        self.errno.map(super::errno::Errno::from_raw)
    }

    /// `ENOENT`, `EACCES`…; `errno` for a number without a name here,
    /// `error` for a failure without a number.
    pub fn errno_name(&self) -> &'static str {
        self.errno().map_or("error", super::errno::Errno::name)
    }
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum TargetRaw {
    Pid {
        pid: u32,
        threads_listed: usize,
        threads_attached: usize,
        /// Threads beyond `max_threads` or [`MAX_COUNTERS`] / events, not
        /// attached.
        threads_not_attached: usize,
        /// Threads that appeared while events were being attached: counted
        /// only if a thread already attached created them.
        threads_started_while_attaching: usize,
        process_exited: bool,
    },
    Command {
        argv: Vec<String>,
        pid: u32,
        exit_code: Option<i32>,
        signal: Option<i32>,
    },
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PmuRaw {
    pub target: TargetRaw,
    /// From enabling to reading (a command: from its exec to its exit).
    pub duration_ns: u64,
    pub counted: Vec<EventRaw>,
    pub failed: Vec<OpenFailure>,
    /// False when perf_event_paranoid made us count user space only.
    pub kernel_included: bool,
    pub fd_limit: u64,
}

/// Counters (events × threads) open at once, at most: each is a kernel
/// perf_event of about a kilobyte plus a descriptor, so a process with
/// thousands of threads times every event would cost the machine more
/// than the answer is worth.
pub const MAX_COUNTERS: usize = 65_536;
