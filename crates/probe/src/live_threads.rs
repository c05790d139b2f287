//! The threads of a watched process, through `numasleuth_kernel::task`:
//! perf attaches to live threads only, so the list is the live system's
//! (a `--root` tree has no threads to attach to).

use numasleuth_kernel::{task, Root};

/// The threads of `pid` now, lowest id first; `None` when the process is
/// gone or lists none.
pub(crate) fn thread_ids(pid: u32) -> Option<Vec<u32>> {
    task::thread_ids(&Root::live(), pid)
        .ok()
        .flatten()
        .filter(|tids| !tids.is_empty())
}

/// Whether `pid` has ended: gone, or a zombie that still lists its main
/// thread in `task/` until its parent reaps it.
pub(crate) fn has_ended(pid: u32) -> bool {
    task::has_ended(&Root::live(), pid)
}
