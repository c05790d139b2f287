//! Why a readers watch could not start, one line per method tried: the
//! user picks the fix (root, a kernel option, `ulimit -n`) from it.
//!
//! An inner error whose text is already in the outer one's is kept as a
//! field, not a `#[source]`: the CLI prints errors with `{:#}`, which
//! would say it twice.

use numasleuth_kernel::tracefs::FormatError;
use thiserror::Error;

use crate::error::paranoid_shown;
use crate::tracepoint::FindError;

/// Why the kprobes or the open tracepoints could not be opened.
#[derive(Debug, Error)]
pub enum PerfError {
    #[error("this kernel has no kprobe PMU (/{pmu_type} is absent)")]
    NoKprobePmu { pmu_type: &'static str },
    #[error(transparent)]
    Find(#[from] FindError),
    #[error(transparent)]
    Format(#[from] FormatError),
    #[error("tracefs has no syscalls:sys_enter_open* events (CONFIG_FTRACE_SYSCALLS off)")]
    NoSyscallEvents,
    #[error(
        "perf refused the system-wide {what} ({error}): kernel.perf_event_paranoid is {} \
         (/proc/sys/kernel/perf_event_paranoid); it needs root or CAP_PERFMON",
        paranoid_shown(*paranoid)
    )]
    Refused {
        what: String,
        error: std::io::Error,
        paranoid: Option<i32>,
    },
    #[error("{what}: too many open files (one perf event per CPU and file): raise `ulimit -n` or watch fewer --files")]
    TooManyFiles { what: String },
    #[error("perf_event_open of {what}: {error}")]
    Open { what: String, error: std::io::Error },
    #[error(
        "this kernel cannot filter opens by name (`filename.ustring`, Linux 5.17 on); \
         without it every open of the machine would be a sample"
    )]
    NoNameFilter,
    #[error("setting the name filter on {what}: {error}")]
    Filter { what: String, error: std::io::Error },
}

/// Why no method of watching the readers could start.
#[derive(Debug, Error)]
pub enum StartError {
    #[error("kprobe: {0}")]
    Kprobe(PerfError),
    #[error("tracepoint: {0}")]
    Tracepoint(PerfError),
    /// `reason` is why the scan was wanted, as `Method::FdScan` keeps it.
    #[error("{reason}; and scanning /proc/*/fd needs root to see other users' processes")]
    ScanNeedsRoot { reason: String },
}

/// Why neither kprobes nor the tracepoint could be used, for the fallback
/// to the scan (whose method keeps this text as its reason).
#[derive(Debug, Error)]
#[error("kprobe: {kprobe}; tracepoint: {tracepoint}")]
pub struct NoPerf {
    pub kprobe: PerfError,
    pub tracepoint: PerfError,
}

/// Why a session on its own thread did not start: the thread, or the
/// session's own reason `E`.
#[derive(Debug, Error)]
pub enum SpawnError<E> {
    #[error("cannot start the {name} thread: {error}")]
    Thread { name: String, error: std::io::Error },
    #[error(transparent)]
    Open(E),
    #[error("the {name} thread ended before it started")]
    Ended { name: String },
}
