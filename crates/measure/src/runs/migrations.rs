//! CPU migrations of a whole run: a perf software counter on the child
//! with `inherit`, so threads and processes it creates afterwards count
//! too, read after it exits (the kernel folds each child's count into
//! ours when the child ends).
//!
//! Opened right after spawn, not before exec (std's spawn returns only
//! once the child has exec'd): a thread created in those microseconds is
//! missed. Nothing migrates the workload before `--release-after` anyway,
//! since it starts pinned.

use std::sync::Arc;

use perf_event::events::Software;
use perf_event::{Builder, Counter};
use serde::{Serialize, Serializer};
use thiserror::Error;

/// Why a run's migrations were not counted. Cloned with the run's record,
/// so the rare other error is shared, not copied.
#[derive(Debug, Clone, Error)]
pub enum CounterError {
    #[error("perf refused a kernel-side software counter (kernel.perf_event_paranoid > 1 for this user)")]
    Refused,
    #[error("this kernel has no cpu-migrations software event")]
    NoEvent,
    #[error(
        "perf_event_open says ENOSYS: the kernel has no perf events, or an emulator such as qemu-user (which has \
         none) refuses the call"
    )]
    NoPerfEvents,
    #[error("the workload exited before the counter was attached")]
    Exited,
    #[error("perf cpu-migrations counter: {0}")]
    Other(Arc<std::io::Error>),
}

/// As the message, the way the record serialized when it held one.
impl Serialize for CounterError {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

/// Starts counting; why not, in words, when the kernel refuses.
pub fn start(pid: u32) -> Result<Counter, CounterError> {
    let mut builder = Builder::new(Software::CPU_MIGRATIONS);
    // Migrations are counted in the scheduler, in kernel mode: excluding
    // the kernel (perf-event2's default) would count nothing.
    builder
        .observe_pid(pid as libc::pid_t)
        .any_cpu()
        .inherit(true)
        .exclude_kernel(false);
    let mut counter = builder.build().map_err(reason)?;
    counter.enable().map_err(reason)?;
    Ok(counter)
}

/// The count, after the workload has been waited for.
pub fn finish(counter: Result<Counter, CounterError>) -> Result<u64, CounterError> {
    counter?.read().map_err(reason)
}

fn reason(error: std::io::Error) -> CounterError {
    match error.raw_os_error() {
        Some(libc::EACCES) | Some(libc::EPERM) => CounterError::Refused,
        Some(libc::ENOENT) | Some(libc::ENODEV) | Some(libc::EOPNOTSUPP) => CounterError::NoEvent,
        Some(libc::ENOSYS) => CounterError::NoPerfEvents,
        Some(libc::ESRCH) => CounterError::Exited,
        _ => CounterError::Other(Arc::new(error)),
    }
}
