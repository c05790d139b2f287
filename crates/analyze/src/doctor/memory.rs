//! Free memory per node against its watermarks, and between nodes.
//!
//! A node is in trouble long before it is "full": once its free pages sink
//! under the high watermark kswapd is reclaiming, under low the allocator
//! falls back to other nodes (or, with zone_reclaim_mode, stalls), and under
//! min allocations enter direct reclaim.

use numasleuth_kernel::gather::HostReadings;
use numasleuth_kernel::procfs::zoneinfo::Zone;
use numasleuth_model::Topology;

use super::memory_nodes;
use crate::findings::{incident, Diagnosis, Finding, Severity};

/// Nodes whose free share differs by more than this are imbalanced…
const IMBALANCE_SPREAD: f64 = 0.5;
/// …when the emptier one is also under this share free.
const IMBALANCE_LOW_FREE: f64 = 0.1;

pub fn check(topo: &Topology, host: &HostReadings, out: &mut Diagnosis) {
    match &host.zones {
        Ok(zones) => out.ran("zone-watermark-pressure", watermarks(zones)),
        Err(e) => out.skipped_for("zone-watermark-pressure", e),
    }
    out.ran("free-memory-imbalance", imbalance(topo));
}

/// The DMA zone is a 16 MiB island legacy devices need; its watermarks say
/// nothing about the node.
fn relevant(zone: &Zone) -> bool {
    zone.managed_pages > 0 && zone.name != "DMA"
}

pub fn watermarks(zones: &[Zone]) -> Vec<Finding> {
    zones
        .iter()
        .filter(|z| relevant(z) && z.free_pages < z.high_pages)
        .map(|z| {
            let (severity, state) = if z.free_pages <= z.min_pages {
                (
                    Severity::Critical,
                    "at or below its min watermark: allocations are in direct reclaim",
                )
            } else if z.free_pages <= z.low_pages {
                (
                    Severity::Critical,
                    "below its low watermark: allocations fall back to other nodes or stall",
                )
            } else {
                (
                    Severity::Warning,
                    "near its low watermark: kswapd is reclaiming, fallback is one burst away",
                )
            };
            Finding {
                id: "zone-watermark-pressure",
                severity,
                title: format!("node {} zone {} is {state}", z.node, z.name),
                evidence: vec![
                    format!(
                        "node {} zone {}: pages free {}, min {}, low {}, high {} (/proc/zoneinfo)",
                        z.node, z.name, z.free_pages, z.min_pages, z.low_pages, z.high_pages
                    ),
                    format!(
                        "headroom above low: {} pages; managed {} pages",
                        z.headroom_over_low_pages(),
                        z.managed_pages
                    ),
                ],
                remedy: format!(
                    "Find what fills node {} (`numastat -m`, `numasleuth memwatch`) and spread or bind it; keep \
                     vm.zone_reclaim_mode=0 so allocations spill to other nodes instead of reclaiming; never poll \
                     /proc/slabinfo, which takes the slab lock that reclaim needs.",
                    z.node
                ),
                incident: Some(incident::ZONE_RECLAIM),
            }
        })
        .collect()
}

fn imbalance(topo: &Topology) -> Vec<Finding> {
    if memory_nodes(topo) < 2 {
        return Vec::new();
    }
    let shares: Vec<(u32, f64, u64, u64)> = topo
        .nodes
        .iter()
        .filter_map(|n| {
            let total = n.memory_total_bytes.filter(|t| *t > 0)?;
            let free = n.memory_free_bytes?;
            Some((n.id, free as f64 / total as f64, free, total))
        })
        .collect();
    let (Some(emptiest), Some(fullest)) = (
        shares.iter().min_by(|a, b| a.1.total_cmp(&b.1)),
        shares.iter().max_by(|a, b| a.1.total_cmp(&b.1)),
    ) else {
        return Vec::new();
    };
    if fullest.1 - emptiest.1 <= IMBALANCE_SPREAD || emptiest.1 >= IMBALANCE_LOW_FREE {
        return Vec::new();
    }
    vec![Finding {
        id: "free-memory-imbalance",
        severity: Severity::Warning,
        title: format!(
            "node {} is {:.0}% free while node {} is {:.0}% free",
            emptiest.0,
            emptiest.1 * 100.0,
            fullest.0,
            fullest.1 * 100.0
        ),
        evidence: shares
            .iter()
            .map(|(id, share, free, total)| {
                format!(
                    "node {id}: {} MiB free of {} MiB ({:.0}%) (/sys/devices/system/node/node{id}/meminfo)",
                    super::mib(*free),
                    super::mib(*total),
                    share * 100.0
                )
            })
            .collect(),
        remedy: format!(
            "New allocations by CPUs of node {} now land remote. Find the consumer (`numastat -p <pid>`, \
             `numasleuth inspect`), then interleave it (`numactl --interleave=all`) or bind it where its threads run; \
             drop stale page cache with care.",
            emptiest.0
        ),
        incident: Some(incident::ZONE_RECLAIM),
    }]
}
