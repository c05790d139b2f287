//! The limits and small parsers the kernel's typed reads share.

use crate::error::{quote, ParseError};

/// Keys one `key: value` file (meminfo, numastat, vmstat, sched) may hold.
/// Real ones have at most about 150; each parsed file is kept per node or
/// per thread, so a 16 MiB file of distinct keys must not become a map of a
/// million entries.
pub const MAX_KEYS: usize = 4096;

/// The most one /proc or /sys file read whole may hold. The biggest ones we
/// read are /proc/interrupts and /proc/PID/maps; a 1,024-CPU machine's
/// interrupts table is about 11 MB. Anything larger is not a kernel file,
/// and reading it whole would only burn memory. (Here, not in kernel, so
/// the snapshot archive's cap on one entry is this very number.)
pub const MAX_KERNEL_FILE_BYTES: u64 = 16 << 20;

/// `16 MiB`, `4 GiB`: caps as people say them.
pub fn format_cap(bytes: u64) -> String {
    match bytes {
        b if b >= 1 << 30 && b % (1 << 30) == 0 => format!("{} GiB", b >> 30),
        b if b >= 1 << 20 && b % (1 << 20) == 0 => format!("{} MiB", b >> 20),
        b if b >= 1 << 10 && b % (1 << 10) == 0 => format!("{} KiB", b >> 10),
        b => format!("{b} bytes"),
    }
}

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

    #[test]
    fn caps_read_as_people_say_them() {
        assert_eq!(format_cap(16 << 20), "16 MiB");
        assert_eq!(format_cap(4 << 30), "4 GiB");
        assert_eq!(format_cap(256 << 10), "256 KiB");
        assert_eq!(format_cap(1000), "1000 bytes");
        assert_eq!(format_cap(MAX_KERNEL_FILE_BYTES), "16 MiB");
    }

    proptest! {
        #[test]
        fn never_panics(text in "\\PC{0,40}") {
            let _ = parse_id(&text);
        }
    }
}
