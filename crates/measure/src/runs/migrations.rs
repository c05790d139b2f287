//! CPU migrations of a whole run: a perf software counter on the child
//! with `inherit`, so threads and processes it creates afterwards count
//! too, read after it exits (the kernel folds each child's count into
//! ours when the child ends).
//!
//! Opened right after spawn, not before exec (std's spawn returns only
//! once the child has exec'd): a thread created in those microseconds is
//! missed. Nothing migrates the workload before `--release-after` anyway,
//! since it starts pinned.

use perf_event::events::Software;
use perf_event::{Builder, Counter};

/// Starts counting; why not, in words, when the kernel refuses.
pub fn start(pid: u32) -> Result<Counter, String> {
    let mut builder = Builder::new(Software::CPU_MIGRATIONS);
    // Migrations are counted in the scheduler, in kernel mode: excluding
    // the kernel (perf-event2's default) would count nothing.
    builder
        .observe_pid(pid as libc::pid_t)
        .any_cpu()
        .inherit(true)
        .exclude_kernel(false);
    let mut counter = builder.build().map_err(|e| reason(&e))?;
    counter.enable().map_err(|e| reason(&e))?;
    Ok(counter)
}

/// The count, after the workload has been waited for.
pub fn finish(counter: Result<Counter, String>) -> Result<u64, String> {
    counter?.read().map_err(|e| reason(&e))
}

fn reason(error: &std::io::Error) -> String {
    match error.raw_os_error() {
        Some(libc::EACCES) | Some(libc::EPERM) => {
            "perf refused a kernel-side software counter (kernel.perf_event_paranoid > 1 for this user)".into()
        }
        Some(libc::ENOENT) | Some(libc::ENODEV) | Some(libc::EOPNOTSUPP) => {
            "this kernel has no cpu-migrations software event".into()
        }
        Some(libc::ENOSYS) => {
            "perf_event_open says ENOSYS: the kernel has no perf events, or an emulator such as qemu-user (which has \
             none) refuses the call"
                .into()
        }
        Some(libc::ESRCH) => "the workload exited before the counter was attached".into(),
        _ => format!("perf cpu-migrations counter: {error}"),
    }
}
