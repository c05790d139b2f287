//! `/sys/devices/system/cpu`: which CPUs exist and are online, where each
//! sits (package, die, cluster, core, SMT siblings) and which caches it
//! shares with whom.
//!
//! Offline CPUs usually have no `topology/` or `cache/` directory, and many
//! architectures leave ids at -1, so every per-CPU field is optional.

use crate::cpulist::IdList;
use crate::error::{quote, ParseError};

pub const CPU_DIR: &str = "sys/devices/system/cpu";

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CpuStates {
    pub online: Option<IdList>,
    pub offline: Option<IdList>,
    pub present: Option<IdList>,
    pub possible: Option<IdList>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CacheFiles {
    pub level: u32,
    /// `Data`, `Instruction` or `Unified`.
    pub kind: String,
    pub size_bytes: Option<u64>,
    pub line_size_bytes: Option<u32>,
    pub shared_cpus: Option<IdList>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CpuFiles {
    pub id: u32,
    /// `cpuN/online`; absent for CPUs that cannot be hot-unplugged (often 0).
    pub online: Option<bool>,
    pub package: Option<u32>,
    pub die: Option<u32>,
    pub cluster: Option<u32>,
    pub core: Option<u32>,
    pub thread_siblings: Option<IdList>,
    /// From the `cpuN/nodeM` link, which survives CPU offlining while the
    /// node's own `cpulist` may drop the CPU.
    pub node: Option<u32>,
    pub caches: Vec<CacheFiles>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CpuSysfs {
    pub states: CpuStates,
    pub cpus: Vec<CpuFiles>,
}

/// `32K`, `1024K`, `8M`, or a bare byte count.
pub fn parse_size(text: &str) -> Result<u64, ParseError> {
    let text = text.trim();
    let (digits, multiplier) = match text.as_bytes().last() {
        Some(b'K') => (&text[..text.len() - 1], 1u64 << 10),
        Some(b'M') => (&text[..text.len() - 1], 1 << 20),
        Some(b'G') => (&text[..text.len() - 1], 1 << 30),
        _ => (text, 1),
    };
    let value: u64 = digits
        .parse()
        .map_err(|_| ParseError::new(format!("`{}` is not a cache size", quote(text))))?;
    Ok(value.saturating_mul(multiplier))
}

pub fn cpu_ids(names: &[String]) -> Vec<u32> {
    let mut ids: Vec<u32> = names
        .iter()
        .filter_map(|n| n.strip_prefix("cpu")?.parse().ok())
        .collect();
    ids.sort_unstable();
    ids
}

/// Ids held by all per-CPU lists together (siblings and cache sharing).
/// Each list is capped by itself, but a hostile tree can give thousands of
/// CPUs the same full-width list through links: 65,536 CPUs × 32 caches ×
/// 65,536 ids would be 500 GiB. 2^25 ids (128 MiB) is far beyond a real
/// machine: 8,192 CPUs whose every cache is shared by 512 of them hold 25M.
pub const MAX_LIST_IDS_IN_ALL: usize = 1 << 25;

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn cache_sizes() {
        assert_eq!(parse_size("32K\n").unwrap(), 32 * 1024);
        assert_eq!(parse_size("16M").unwrap(), 16 << 20);
        assert_eq!(parse_size("512").unwrap(), 512);
        assert!(parse_size("K").is_err());
        assert!(parse_size("big").is_err());
    }

    #[test]
    fn cpu_names() {
        let names = ["cpu0", "cpu10", "cpufreq", "cpuidle", "online", "cpu2"].map(String::from);
        assert_eq!(cpu_ids(&names), vec![0, 2, 10]);
    }

    proptest! {
        #[test]
        fn never_panic(text in "\\PC{0,40}") {
            let _ = parse_size(&text);
        }
    }
}
