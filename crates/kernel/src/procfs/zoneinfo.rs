//! Reading `procfs::zoneinfo`; its format, types and parser are `numasleuth_parse::procfs::zoneinfo`.

pub use numasleuth_parse::procfs::zoneinfo::*;

use crate::error::ReadError;
use crate::root::Root;

pub fn read(root: &Root) -> Result<Vec<Zone>, ReadError> {
    let text = root.read(PATH)?;
    parse(&text).map_err(|e| ReadError::malformed(PATH, e.0))
}
