//! Typed reads of one optional kernel file, shared by the readers so each
//! says the same thing about a missing file (`None`) and a malformed one
//! (an error naming the file).

use crate::cpulist::IdList;
use crate::error::{quote, ParseError, ReadError};
use crate::root::Root;

pub use numasleuth_parse::read::{parse_id, too_many_keys, MAX_KEYS};

pub(crate) fn parsed<T>(
    root: &Root,
    relative: &str,
    parse: impl Fn(&str) -> Result<T, ParseError>,
) -> Result<Option<T>, ReadError> {
    root.read_optional(relative)?
        .map(|text| parse(&text).map_err(|e| ReadError::malformed(relative, e.0)))
        .transpose()
}

pub(crate) fn list(root: &Root, relative: &str) -> Result<Option<IdList>, ReadError> {
    parsed(root, relative, IdList::parse)
}

/// A node list (`node/online`, `cpuset.mems`): ids below MAX_NUMNODES.
pub(crate) fn node_list(root: &Root, relative: &str) -> Result<Option<IdList>, ReadError> {
    parsed(root, relative, IdList::parse_nodes)
}

/// A `_list` file, or its hex-mask twin on kernels that lack the list.
pub(crate) fn list_or_mask(root: &Root, list_path: &str, mask_path: &str) -> Result<Option<IdList>, ReadError> {
    match list(root, list_path)? {
        Some(ids) => Ok(Some(ids)),
        None => parsed(root, mask_path, IdList::parse_mask),
    }
}

pub(crate) fn number(root: &Root, relative: &str) -> Result<Option<u64>, ReadError> {
    parsed(root, relative, |text| {
        text.trim()
            .parse()
            .map_err(|_| ParseError::new(format!("`{}` is not a number", quote(text.trim()))))
    })
}

pub(crate) fn id(root: &Root, relative: &str) -> Result<Option<u32>, ReadError> {
    Ok(parsed(root, relative, parse_id)?.flatten())
}
