//! Reading `procfs::statm`; its format, types and parser are `numasleuth_parse::procfs::statm`.

pub use numasleuth_parse::procfs::statm::*;

use crate::error::ReadError;
use crate::root::Root;

pub fn read(root: &Root, pid: u32) -> Result<Statm, ReadError> {
    let path = format!("proc/{pid}/statm");
    parse(&root.read(&path)?).map_err(|e| ReadError::malformed(&path, e.0))
}
