//! Reading `procfs::status`; its format, types and parser are `numasleuth_parse::procfs::status`.

pub use numasleuth_parse::procfs::status::*;

use crate::error::ReadError;
use crate::root::Root;

/// Reads `status` in a process's or thread's directory (`proc/self`,
/// [`crate::task::thread_dir`]).
pub fn read_allowed(root: &Root, dir: &str) -> Result<Option<Allowed>, ReadError> {
    let path = format!("{dir}/status");
    root.read_optional(&path)?
        .map(|text| parse_allowed(&text).map_err(|e| ReadError::malformed(&path, e.0)))
        .transpose()
}

/// The signals set to be ignored by the process of `dir` (`proc/self`);
/// `None` when the kernel shows no `SigIgn` line.
pub fn read_ignored_signals(root: &Root, dir: &str) -> Result<Option<SignalMask>, ReadError> {
    let path = format!("{dir}/status");
    let text = root.read(&path)?;
    parse_ignored_signals(&text).map_err(|e| ReadError::malformed(&path, e.0))
}
