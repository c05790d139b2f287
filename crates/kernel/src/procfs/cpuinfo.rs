//! Reading `procfs::cpuinfo`; its format, types and parser are `numasleuth_parse::procfs::cpuinfo`.

pub use numasleuth_parse::procfs::cpuinfo::*;

use crate::error::ReadError;
use crate::root::Root;

/// `Ok(None)` when the file is absent (some containers hide it).
pub fn read(root: &Root) -> Result<Option<CpuInfo>, ReadError> {
    Ok(root.read_optional("proc/cpuinfo")?.map(|text| parse(&text)))
}
