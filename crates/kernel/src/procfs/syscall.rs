//! `/proc/PID/task/TID/syscall`: the format and its parser are
//! `numasleuth_parse::procfs::syscall`; reading it for one thread is here.

pub use numasleuth_parse::procfs::syscall::*;

use crate::error::ReadError;
use crate::root::Root;

/// The stack pointer of thread `tid` of `pid`; `None` while it runs.
pub fn read_stack_pointer(root: &Root, pid: u32, tid: u32) -> Result<Option<u64>, ReadError> {
    let relative = format!("{}/syscall", crate::task::thread_dir(pid, tid));
    let text = root.read(&relative)?;
    parse_stack_pointer(&text).map_err(|e| ReadError::malformed(&relative, e.0))
}
