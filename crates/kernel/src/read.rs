//! Typed reads of one optional kernel file, shared by the readers so each
//! says the same thing about a missing file (`None`) and a malformed one
//! (an error naming the file).

use crate::cpulist::IdList;
use crate::error::{quote, ParseError, ReadError};
use crate::root::Root;

/// Keys one `key: value` file (meminfo, numastat, vmstat, sched) may hold.
/// Real ones have at most about 150; each parsed file is kept per node or
/// per thread, so a 16 MiB file of distinct keys must not become a map of a
/// million entries.
pub const MAX_KEYS: usize = 4096;

/// The error for a file past [`MAX_KEYS`].
pub(crate) fn too_many_keys() -> ParseError {
    ParseError::new(format!("more than {MAX_KEYS} keys"))
}

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

/// Ids the kernel writes as -1 when unknown (topology ids, `numa_node`).
pub fn parse_id(text: &str) -> Result<Option<u32>, ParseError> {
    let value: i64 = text
        .trim()
        .parse()
        .map_err(|_| ParseError::new(format!("`{}` is not an id", quote(text.trim()))))?;
    Ok(u32::try_from(value).ok())
}

pub(crate) fn id(root: &Root, relative: &str) -> Result<Option<u32>, ReadError> {
    Ok(parsed(root, relative, parse_id)?.flatten())
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn ids_minus_one_mean_unknown() {
        // cluster_id on x86 kernels before 5.16 and numa_node without SRAT.
        assert_eq!(parse_id("-1\n").unwrap(), None);
        assert_eq!(parse_id("3\n").unwrap(), Some(3));
        assert!(parse_id("three").is_err());
    }

    proptest! {
        #[test]
        fn never_panics(text in "\\PC{0,40}") {
            let _ = parse_id(&text);
        }
    }
}
