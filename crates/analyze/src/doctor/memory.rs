//! Free memory per node against its watermarks, and between nodes.
//!
//! A node is in trouble long before it is "full": once its free pages sink
//! under the high watermark kswapd is reclaiming, under low the allocator
//! falls back to other nodes (or, with zone_reclaim_mode, stalls), and under
//! min allocations enter direct reclaim.

use numasleuth_model::Topology;
use numasleuth_parse::gather::HostReadings;
use numasleuth_parse::procfs::zoneinfo::Zone;

use super::memory_nodes;
use super::CheckId;
use crate::findings::{incident, Diagnosis, Evidence, Finding, Severity};

/// Nodes whose free share differs by more than this are imbalanced…
const IMBALANCE_SPREAD: f64 = 0.5;
/// …when the emptier one is also under this share free.
const IMBALANCE_LOW_FREE: f64 = 0.1;

pub fn check(topo: &Topology, host: &HostReadings, out: &mut Diagnosis) {
    match &host.zones {
        Ok(zones) => out.ran(CheckId::ZoneWatermarkPressure, watermarks(zones, host.base_page_bytes)),
        Err(e) => out.skipped_for(CheckId::ZoneWatermarkPressure, e),
    }
    out.ran(CheckId::FreeMemoryImbalance, imbalance(topo));
}

fn relevant(zone: &Zone) -> bool {
    crate::memwatch::ordinary_zone(zone)
}

/// `174188 pages` as people read memory: `680.4 MiB (174188 pages)` when
/// the page size is known.
fn amount(pages: u64, page_bytes: Option<u64>) -> String {
    match page_bytes {
        Some(bytes) => format!(
            "{:.1} MiB ({pages} pages)",
            pages.saturating_mul(bytes) as f64 / f64::from(1u32 << 20)
        ),
        None => format!("{pages} pages"),
    }
}

/// The zone's counters as read, in MiB for people when the page size is
/// known, always in pages for machines.
fn watermark_evidence(z: &Zone, page_bytes: Option<u64>) -> Vec<Evidence> {
    let show = |pages: u64| amount(pages, page_bytes);
    let levels = match page_bytes {
        Some(_) => format!(
            "node {} zone {}: free {}, min {}, low {}, high {} (/proc/zoneinfo)",
            z.node,
            z.name,
            show(z.free_pages),
            show(z.min_pages),
            show(z.low_pages),
            show(z.high_pages)
        ),
        None => format!(
            "node {} zone {}: pages free {}, min {}, low {}, high {} (/proc/zoneinfo; a snapshot \
             does not record the page size, so these stay in pages)",
            z.node, z.name, z.free_pages, z.min_pages, z.low_pages, z.high_pages
        ),
    };
    let headroom = format!(
        "headroom above low: {}{}; managed {}",
        // Negative once below low.
        if z.headroom_over_low_pages() < 0 { "-" } else { "" },
        show(z.headroom_over_low_pages().unsigned_abs()),
        show(z.managed_pages)
    );
    vec![
        Evidence::new(ZONEINFO, levels)
            .with("node", z.node)
            .with("free_pages", z.free_pages)
            .with("min_pages", z.min_pages)
            .with("low_pages", z.low_pages)
            .with("high_pages", z.high_pages)
            .with_some("page_bytes", page_bytes),
        Evidence::new(ZONEINFO, headroom)
            .with("node", z.node)
            .with("headroom_over_low_pages", z.headroom_over_low_pages())
            .with("managed_pages", z.managed_pages),
    ]
}

const ZONEINFO: &str = "/proc/zoneinfo";

pub fn watermarks(zones: &[Zone], page_bytes: Option<u64>) -> Vec<Finding> {
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
                id: CheckId::ZoneWatermarkPressure.as_str(),
                severity,
                confidence: None,
                title: format!("node {} zone {} is {state}", z.node, z.name),
                evidence: watermark_evidence(z, page_bytes),
                remedy: format!(
                    "Find what fills node {} (`numastat -m`, `numasleuth memwatch`) and spread or bind it; keep \
                     vm.zone_reclaim_mode=0 so allocations spill to other nodes instead of reclaiming; never poll \
                     /proc/slabinfo, which takes the slab lock that reclaim needs.",
                    z.node
                ),
                incident: Some(incident::ZONE_RECLAIM),
                explains: Vec::new(),
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
            let total = n.memory_bytes()?;
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
        id: CheckId::FreeMemoryImbalance.as_str(),
        severity: Severity::Warning,
        confidence: None,
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
                Evidence::new(
                    format!("/sys/devices/system/node/node{id}/meminfo"),
                    format!(
                        "node {id}: {} MiB free of {} MiB ({:.0}%) (/sys/devices/system/node/node{id}/meminfo)",
                        super::mib(*free),
                        super::mib(*total),
                        share * 100.0
                    ),
                )
                .with("node", *id)
                .with("free_bytes", *free)
                .with("total_bytes", *total)
                .with("free_ratio", *share)
            })
            .collect(),
        remedy: format!(
            "New allocations by CPUs of node {} now land remote. Find the consumer (`numastat -p <pid>`, \
             `numasleuth inspect`), then interleave it (`numactl --interleave=all`) or bind it where its threads run; \
             drop stale page cache with care.",
            emptiest.0
        ),
        incident: Some(incident::ZONE_RECLAIM),
        explains: Vec::new(),
    }]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn zone(free_pages: u64) -> Zone {
        Zone {
            node: 1,
            name: "Normal".into(),
            free_pages,
            min_pages: 1000,
            low_pages: 1250,
            high_pages: 1500,
            spanned_pages: 262_144,
            present_pages: 262_144,
            managed_pages: 250_000,
            protection_pages: Vec::new(),
            counters: std::collections::BTreeMap::new(),
        }
    }

    #[test]
    fn evidence_is_in_mib_with_the_pages_when_the_page_size_is_known() {
        let found = watermarks(&[zone(1100)], Some(4096));
        let evidence = found[0].evidence_text();
        assert!(
            evidence.contains("free 4.3 MiB (1100 pages), min 3.9 MiB (1000 pages)"),
            "{evidence}"
        );
        // Below low, the headroom is negative, in MiB too.
        assert!(
            evidence.contains("headroom above low: -0.6 MiB (150 pages)"),
            "{evidence}"
        );
        assert!(evidence.contains("managed 976.6 MiB (250000 pages)"), "{evidence}");
    }

    #[test]
    fn a_snapshot_without_a_page_size_stays_in_pages_and_says_why() {
        let found = watermarks(&[zone(1100)], None);
        let evidence = found[0].evidence_text();
        assert!(evidence.contains("pages free 1100, min 1000") && evidence.contains("does not record the page size"));
    }

    #[test]
    fn the_watermark_evidence_carries_the_pages_as_numbers() {
        let found = watermarks(&[zone(1100)], Some(4096));
        let levels = &found[0].evidence[0];
        assert_eq!(levels.source, "/proc/zoneinfo");
        let v = &levels.values;
        assert_eq!(
            (
                v.int("free_pages"),
                v.int("min_pages"),
                v.int("low_pages"),
                v.int("high_pages")
            ),
            (Some(1100), Some(1000), Some(1250), Some(1500))
        );
        assert_eq!((v.int("node"), v.int("page_bytes")), (Some(1), Some(4096)));
        let headroom = &found[0].evidence[1].values;
        assert_eq!(headroom.int("headroom_over_low_pages"), Some(-150));
        assert_eq!(headroom.int("managed_pages"), Some(250_000));
        // Without a page size the pages stay and no size is invented.
        let found = watermarks(&[zone(1100)], None);
        assert_eq!(found[0].evidence[0].values.int("page_bytes"), None);
        assert_eq!(found[0].evidence[0].values.int("free_pages"), Some(1100));
    }
}
