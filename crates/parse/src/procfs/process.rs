//! One process's threads and mappings, as `numasleuth_kernel::procfs::process`
//! reads them.

use crate::cpulist::IdList;
use crate::procfs::maps::Mapping;
use crate::procfs::numa_maps::NumaMapsEntry;
use crate::procfs::task::{Sched, TaskStat};

/// One thread: where it runs now and where it may run.
#[derive(Debug, Clone, PartialEq)]
pub struct ThreadReading {
    pub stat: TaskStat,
    pub allowed_cpus: Option<IdList>,
    pub allowed_mems: Option<IdList>,
    /// Absent on kernels without CONFIG_SCHED_DEBUG.
    pub sched: Option<Sched>,
}

/// A mapping from `maps` with its `numa_maps` line, when there was one.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Vma {
    pub mapping: Mapping,
    pub numa: Option<NumaMapsEntry>,
}

/// What the mapping stream saw, besides the mappings themselves.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct VmaStreamSummary {
    pub vmas: u64,
    /// False when the kernel has no numa_maps (built without NUMA).
    pub numa_maps_available: bool,
    /// numa_maps lines with no mapping in `maps`: the process changed its
    /// mappings between the two reads.
    pub unmatched_numa_lines: u64,
}
