//! Reading `procfs::meminfo`; its format, types and parser are `numasleuth_parse::procfs::meminfo`.

pub use numasleuth_parse::procfs::meminfo::*;

use crate::error::ReadError;
use crate::root::Root;

pub fn read(root: &Root, relative: &str) -> Result<Meminfo, ReadError> {
    let text = root.read(relative)?;
    parse(&text).map_err(|e| ReadError::malformed(relative, e.0))
}
