//! The limits and small parsers the kernel's typed reads share.

use crate::error::{quote, ParseError};

/// Keys one `key: value` file (meminfo, numastat, vmstat, sched) may hold.
/// Real ones have at most about 150; each parsed file is kept per node or
/// per thread, so a 16 MiB file of distinct keys must not become a map of a
/// million entries.
pub const MAX_KEYS: usize = 4096;

/// The error for a file past [`MAX_KEYS`].
pub fn too_many_keys() -> ParseError {
    ParseError::new(format!("more than {MAX_KEYS} keys"))
}

/// Ids the kernel writes as -1 when unknown (topology ids, `numa_node`).
pub fn parse_id(text: &str) -> Result<Option<u32>, ParseError> {
    let value: i64 = text
        .trim()
        .parse()
        .map_err(|_| ParseError::new(format!("`{}` is not an id", quote(text.trim()))))?;
    Ok(u32::try_from(value).ok())
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
