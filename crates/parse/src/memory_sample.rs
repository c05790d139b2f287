//! The per-node memory signals as one sample: what
//! `numasleuth_kernel::memory_sample::memory_sample` reads (zoneinfo, each
//! node's numastat, vmstat and meminfo, /proc/vmstat, zone_reclaim_mode),
//! and which of its parts could not be read.

use std::collections::{BTreeMap, BTreeSet};

use crate::error::ReadError;
use crate::procfs::meminfo::Meminfo;
use crate::procfs::zoneinfo::Zone;

/// Counters of one file, by name.
pub type Counters = BTreeMap<String, u64>;

/// Which parts beyond zoneinfo, numastat and /proc/vmstat are read: each
/// costs one more file per node (or per sample) that not every caller uses.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Parts {
    /// Each node's `vmstat`: per-node reclaim counters, where kept.
    pub node_vmstat: bool,
    /// Each node's `meminfo`: its total and free bytes.
    pub node_meminfo: bool,
    /// `vm.zone_reclaim_mode`.
    pub zone_reclaim_mode: bool,
}

impl Parts {
    /// `top` and `probe-latency`: the fewest files, read beside a
    /// measurement.
    pub const SIGNALS: Parts = Parts {
        node_vmstat: false,
        node_meminfo: false,
        zone_reclaim_mode: false,
    };
    /// `memwatch`: per-node reclaim and the zone-reclaim mode, for its events.
    pub const WATCH: Parts = Parts {
        node_vmstat: true,
        node_meminfo: false,
        zone_reclaim_mode: true,
    };
    /// `serve`: each node's total and free bytes.
    pub const EXPORT: Parts = Parts {
        node_vmstat: false,
        node_meminfo: true,
        zone_reclaim_mode: false,
    };
}

/// One reading, raw and unchanged. The nodes are those zoneinfo lists.
#[derive(Debug, Default)]
pub struct MemorySample {
    pub zones: Vec<Zone>,
    /// By node; a node without the file is absent.
    pub numastat: BTreeMap<u32, Counters>,
    pub node_vmstat: BTreeMap<u32, Counters>,
    pub node_meminfo: BTreeMap<u32, Meminfo>,
    /// `None` when it could not be read (see `unread`).
    pub vmstat: Option<Counters>,
    /// `None` on a kernel without it, or when not asked for.
    pub zone_reclaim_mode: Option<u64>,
    /// Each part that could not be read: its name (`zoneinfo`,
    /// `node1/numastat`, `vmstat`) and why, in reading order.
    pub unread: Vec<(String, ReadError)>,
}

impl MemorySample {
    /// The nodes zoneinfo lists.
    pub fn nodes(&self) -> BTreeSet<u32> {
        self.zones.iter().map(|z| z.node).collect()
    }

    /// The sample, or the first part that could not be read.
    pub fn complete(mut self) -> Result<MemorySample, ReadError> {
        if self.unread.is_empty() {
            return Ok(self);
        }
        Err(self.unread.swap_remove(0).1)
    }
}
