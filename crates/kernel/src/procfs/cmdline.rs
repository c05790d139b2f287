//! Reading `procfs::cmdline`; its format, types and parser are `numasleuth_parse::procfs::cmdline`.

pub use numasleuth_parse::procfs::cmdline::*;

use crate::error::ReadError;
use crate::root::Root;

/// Reads `proc/PID/cmdline`; `Ok(None)` when the process has none.
pub fn read(root: &Root, pid: u32) -> Result<Option<String>, ReadError> {
    Ok(parse(&root.read(&format!("proc/{pid}/cmdline"))?))
}
