//! Caches as shared domains rather than per-CPU copies: "L3, 32 MiB,
//! shared by CPUs 0-15" once, not sixteen times.

use std::collections::BTreeMap;

use numasleuth_parse::sysfs::cpu::CpuFiles;
use numasleuth_parse::IdList;
use serde::{Serialize, Serializer};

/// What a cache holds, from its sysfs `type`. The variants keep the
/// kernel's words in alphabetical order, so sorting by kind is unchanged;
/// a word this build does not know is kept as the kernel wrote it.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub enum CacheKind {
    Data,
    Instruction,
    Unified,
    Other(String),
}

impl CacheKind {
    /// Data and unified caches hold data; an instruction cache does not,
    /// so it says nothing about where data is shared.
    pub fn holds_data(&self) -> bool {
        *self != CacheKind::Instruction
    }
}

impl From<&str> for CacheKind {
    fn from(word: &str) -> Self {
        match word {
            "Data" => CacheKind::Data,
            "Instruction" => CacheKind::Instruction,
            "Unified" => CacheKind::Unified,
            other => CacheKind::Other(other.to_string()),
        }
    }
}

/// As a JSON string, the kernel's word (what `Display` writes).
impl Serialize for CacheKind {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl std::fmt::Display for CacheKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            CacheKind::Data => "Data",
            CacheKind::Instruction => "Instruction",
            CacheKind::Unified => "Unified",
            CacheKind::Other(word) => word,
        })
    }
}

/// Serialized as `topo --json` writes a cache; the field order is also
/// the sort order of `Ord`.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct CacheDomain {
    pub level: u32,
    #[serde(rename = "type")]
    pub kind: CacheKind,
    pub size_bytes: Option<u64>,
    pub line_size_bytes: Option<u32>,
    pub cpus: IdList,
}

pub fn cache_domains(cpus: &[CpuFiles]) -> Vec<CacheDomain> {
    // Keyed by what identifies a physical cache, so a 4096-CPU machine
    // dedups in n log n.
    let mut domains: BTreeMap<(u32, CacheKind, IdList), CacheDomain> = BTreeMap::new();
    for cpu in cpus {
        for cache in &cpu.caches {
            // A cache without a shared list is private to the CPU reading it.
            let shared = cache.shared_cpus.clone().unwrap_or_else(|| IdList::new(vec![cpu.id]));
            let kind = CacheKind::from(cache.kind.as_str());
            domains
                .entry((cache.level, kind.clone(), shared.clone()))
                .or_insert_with(|| CacheDomain {
                    level: cache.level,
                    kind,
                    size_bytes: cache.size_bytes,
                    line_size_bytes: cache.line_size_bytes,
                    cpus: shared,
                });
        }
    }
    domains.into_values().collect()
}
