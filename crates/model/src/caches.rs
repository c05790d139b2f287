//! Caches as shared domains rather than per-CPU copies: "L3, 32 MiB,
//! shared by CPUs 0-15" once, not sixteen times.

use std::collections::BTreeMap;

use numasleuth_kernel::sysfs::cpu::CpuFiles;
use numasleuth_kernel::IdList;

#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct CacheDomain {
    pub level: u32,
    pub kind: String,
    pub size_bytes: Option<u64>,
    pub line_size_bytes: Option<u32>,
    pub cpus: IdList,
}

pub fn cache_domains(cpus: &[CpuFiles]) -> Vec<CacheDomain> {
    // Keyed by what identifies a physical cache, so a 4096-CPU machine
    // dedups in n log n.
    let mut domains: BTreeMap<(u32, String, IdList), CacheDomain> = BTreeMap::new();
    for cpu in cpus {
        for cache in &cpu.caches {
            // A cache without a shared list is private to the CPU reading it.
            let shared = cache.shared_cpus.clone().unwrap_or_else(|| IdList::new(vec![cpu.id]));
            domains
                .entry((cache.level, cache.kind.clone(), shared.clone()))
                .or_insert_with(|| CacheDomain {
                    level: cache.level,
                    kind: cache.kind.clone(),
                    size_bytes: cache.size_bytes,
                    line_size_bytes: cache.line_size_bytes,
                    cpus: shared,
                });
        }
    }
    domains.into_values().collect()
}
