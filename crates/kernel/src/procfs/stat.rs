//! Reading `procfs::stat`; its format, types and parser are `numasleuth_parse::procfs::stat`.

pub use numasleuth_parse::procfs::stat::*;

use crate::{ReadError, Root};
use std::collections::BTreeMap;

pub fn read(root: &Root) -> Result<BTreeMap<u32, CpuTicks>, ReadError> {
    let text = root.read(STAT)?;
    parse(&text).map_err(|e| ReadError::malformed(STAT, e.0))
}
