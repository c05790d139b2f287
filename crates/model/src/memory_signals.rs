//! One sample of the per-node memory signals, assembled from one reading
//! of `gather::memory_sample`: what memwatch, top, serve and
//! probe-latency's sampler hand to analysis. Assembling is not judging: the
//! zones are summed per node by the one rule of which zones count
//! ([`ordinary_zone`]), and the counters are kept raw; rates and events are
//! analyze's (`analyze::memwatch`).
//!
//! /proc/vmstat's reclaim counters are machine-wide: they are kept apart
//! from the per-node figures ([`MachineCounters`]) so no node is blamed for
//! another's reclaim.

use std::collections::BTreeMap;

use numasleuth_parse::gather::MemorySample;
use numasleuth_parse::procfs::zoneinfo::Zone;
use serde::Serialize;

/// One node at one instant, summed over the zones that serve ordinary
/// allocations ([`ordinary_zone`]).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct NodeSample {
    pub node: u32,
    pub free_pages: u64,
    pub min_pages: u64,
    pub low_pages: u64,
    pub high_pages: u64,
    /// Cumulative `numastat` counters of the node.
    pub numa_miss: Option<u64>,
    pub numa_foreign: Option<u64>,
    /// Cumulative per-node reclaim counters from `nodeN/vmstat`, on
    /// kernels that keep them there; `None` elsewhere.
    pub pgscan_kswapd: Option<u64>,
    pub pgscan_direct: Option<u64>,
}

/// Cumulative machine-wide counters from /proc/vmstat.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct MachineCounters {
    pub pgscan_kswapd: u64,
    pub pgscan_direct: u64,
    pub pgsteal_kswapd: u64,
    pub pgsteal_direct: u64,
    /// Sum of `allocstall_*`: allocations that entered direct reclaim.
    pub allocstall: u64,
    /// Absent before Linux 4.13.
    pub oom_kill: Option<u64>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Sample {
    pub t_s: f64,
    pub nodes: Vec<NodeSample>,
    pub machine: MachineCounters,
    /// `vm.zone_reclaim_mode` at this sample, when readable: with it set,
    /// direct scans without allocation stalls are node-local reclaim.
    pub zone_reclaim_mode: Option<u64>,
}

impl Sample {
    /// The sample memwatch, top and probe-latency work on, from one
    /// reading of `gather::memory_sample` taken `t_s` into the run.
    pub fn from_reading(t_s: f64, reading: &MemorySample) -> Sample {
        Sample {
            t_s,
            nodes: node_samples(&reading.zones, &reading.numastat, &reading.node_vmstat),
            machine: reading.vmstat.as_ref().map(machine_counters).unwrap_or_default(),
            zone_reclaim_mode: reading.zone_reclaim_mode,
        }
    }
}

/// Whether a zone speaks for its node's ordinary allocations, by the
/// kernel's own data rather than the zone's name: it manages pages, and its
/// lowmem reserve against allocations aimed at the highest zone
/// (zoneinfo's largest `protection`) leaves some of them to those
/// allocations. That shuts out x86's 16 MiB DMA island beside gigabytes
/// of higher zones (3840 pages against a 6987-page reserve on our 24 GiB
/// machines) and keeps arm64's ZONE_DMA, which holds up to 4 GiB of
/// ordinary memory and is a small guest's only zone. memwatch and doctor
/// agree.
pub fn ordinary_zone(zone: &Zone) -> bool {
    let reserve_pages = zone.protection_pages.iter().copied().max().unwrap_or(0);
    zone.managed_pages > reserve_pages
}

/// Per-node samples from zoneinfo, `nodeN/numastat` and (optional)
/// `nodeN/vmstat`.
pub fn node_samples(
    zones: &[Zone],
    numastat: &BTreeMap<u32, BTreeMap<String, u64>>,
    node_vmstat: &BTreeMap<u32, BTreeMap<String, u64>>,
) -> Vec<NodeSample> {
    let mut by_node: BTreeMap<u32, NodeSample> = BTreeMap::new();
    for zone in zones.iter().filter(|z| ordinary_zone(z)) {
        let n = by_node.entry(zone.node).or_insert_with(|| NodeSample {
            node: zone.node,
            ..NodeSample::default()
        });
        n.free_pages = n.free_pages.saturating_add(zone.free_pages);
        n.min_pages = n.min_pages.saturating_add(zone.min_pages);
        n.low_pages = n.low_pages.saturating_add(zone.low_pages);
        n.high_pages = n.high_pages.saturating_add(zone.high_pages);
    }
    for (node, sample) in by_node.iter_mut() {
        let counters = numastat.get(node);
        sample.numa_miss = counters.and_then(|c| c.get("numa_miss").copied());
        sample.numa_foreign = counters.and_then(|c| c.get("numa_foreign").copied());
        let vmstat = node_vmstat.get(node);
        sample.pgscan_kswapd = vmstat.and_then(|c| c.get("pgscan_kswapd").copied());
        sample.pgscan_direct = vmstat.and_then(|c| c.get("pgscan_direct").copied());
    }
    by_node.into_values().collect()
}

/// The machine-wide reclaim and OOM counters of /proc/vmstat. Exact names:
/// `pgscan_direct_throttle` is a different thing from `pgscan_direct`.
pub fn machine_counters(vmstat: &BTreeMap<String, u64>) -> MachineCounters {
    let get = |name: &str| vmstat.get(name).copied().unwrap_or(0);
    MachineCounters {
        pgscan_kswapd: get("pgscan_kswapd"),
        pgscan_direct: get("pgscan_direct"),
        pgsteal_kswapd: get("pgsteal_kswapd"),
        pgsteal_direct: get("pgsteal_direct"),
        allocstall: vmstat
            .iter()
            .filter(|(k, _)| k.starts_with("allocstall"))
            .fold(0u64, |sum, (_, v)| sum.saturating_add(*v)),
        oom_kill: vmstat.get("oom_kill").copied(),
    }
}
