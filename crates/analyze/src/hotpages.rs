//! `hotpages`: from DAMON's regions over a run to regions ranked by heat ×
//! remoteness, and the `hot-remote-memory` finding.
//!
//! Heat is DAMON's `nr_accesses` as a share of the samples it takes per
//! aggregation (`aggr_us / sample_us`). One aggregation is noisy and the
//! first ones are coarse (DAMON starts from a few large regions and splits
//! them as it goes), so each region of the last snapshot gets the mean
//! `nr_accesses` of the second half of the run, every snapshot's regions
//! weighted by how many bytes they share with it. Remoteness is the share of
//! the region's resident bytes on nodes where none of the process's threads
//! runs (`inspect`'s definition, `model::process::thread_nodes`).

use numasleuth_model::hotpages::{DamonSnapshot, HotRegion, HotRemoteRegion, PagePlacement};
use numasleuth_model::process::NodeCounts;
use numasleuth_parse::sysfs::damon::DamonAttrs;
use numasleuth_parse::IdList;

use crate::findings::{incident, Evidence, Finding, Severity};

/// A region accessed in fewer than this share of samples is not hot: DAMON
/// finds stray accesses in cold memory too (a page-table walk, a
/// neighbour's prefetch), and a region must stand out from that floor.
pub const HOT_PERCENT: f64 = 10.0;
/// A hot region is remote when at least this share of its resident bytes
/// is on nodes where no thread runs.
pub const REMOTE_SHARE: f64 = 0.5;
/// Hot remote regions named in the finding's evidence.
const EVIDENCE_REGIONS: usize = 5;

/// Samples per aggregation: the most `nr_accesses` can be.
pub fn max_nr_accesses(attrs: &DamonAttrs) -> u64 {
    (attrs.aggr_us / attrs.sample_us.max(1)).max(1)
}

/// The last snapshot's regions, each with its heat over the run's second
/// half. No placement yet.
pub fn heat(snapshots: &[DamonSnapshot], attrs: &DamonAttrs) -> Vec<HotRegion> {
    // A snapshot without regions says nothing (a live target always has
    // some): the last one with regions is the answer.
    let snapshots: Vec<&DamonSnapshot> = snapshots.iter().filter(|s| !s.regions.is_empty()).collect();
    let Some(last) = snapshots.last() else {
        return Vec::new();
    };
    let settled = &snapshots[snapshots.len() / 2..];
    let max = max_nr_accesses(attrs) as f64;
    last.regions
        .iter()
        .map(|r| {
            let mean = mean_accesses(settled, r.start, r.end).unwrap_or(r.nr_accesses as f64);
            HotRegion {
                start: r.start,
                end: r.end,
                nr_accesses: r.nr_accesses,
                age: r.age,
                nr_accesses_mean: mean,
                access_percent: (mean / max * 100.0).min(100.0),
                placement: None,
                bytes_by_node: NodeCounts::new(),
                remote_bytes: None,
                score: 0.0,
                name: None,
            }
        })
        .collect()
}

/// Mean `nr_accesses` over `snapshots` of the bytes `start..end`, each
/// region weighted by its overlap; `None` when nothing overlaps.
fn mean_accesses(snapshots: &[&DamonSnapshot], start: u64, end: u64) -> Option<f64> {
    let (mut weighted, mut bytes) = (0.0f64, 0.0f64);
    for snapshot in snapshots {
        // Regions are sorted and disjoint: skip to the first that ends
        // past `start`.
        let first = snapshot.regions.partition_point(|r| r.end <= start);
        for r in snapshot.regions[first..].iter().take_while(|r| r.start < end) {
            let overlap = (r.end.min(end) - r.start.max(start)) as f64;
            weighted += overlap * r.nr_accesses as f64;
            bytes += overlap;
        }
    }
    (bytes > 0.0).then(|| weighted / bytes)
}

/// Indices of the regions worth placing: hot ones, hottest first (then
/// the larger), at most `limit`.
pub fn candidates(regions: &[HotRegion], limit: usize) -> Vec<usize> {
    let mut hot: Vec<usize> = (0..regions.len())
        .filter(|&i| regions[i].access_percent >= HOT_PERCENT)
        .collect();
    hot.sort_by(|&a, &b| {
        let (a, b) = (&regions[a], &regions[b]);
        b.access_percent
            .total_cmp(&a.access_percent)
            .then(b.bytes().cmp(&a.bytes()))
    });
    hot.truncate(limit);
    hot
}

/// Page addresses to ask about in `start..end`: every page when there are
/// at most `max_pages`, else `max_pages` spread evenly (the first page of
/// each equal slice).
pub fn sample_addresses(start: u64, end: u64, page_bytes: u64, max_pages: u64) -> Vec<u64> {
    let page_bytes = page_bytes.max(1);
    let first = start / page_bytes;
    let pages = end.div_ceil(page_bytes).saturating_sub(first);
    if pages <= max_pages {
        return (0..pages).map(|i| (first + i) * page_bytes).collect();
    }
    let max_pages = max_pages.max(1);
    (0..max_pages)
        .map(|i| (first + (i as u128 * pages as u128 / max_pages as u128) as u64) * page_bytes)
        .collect()
}

/// Attaches a placement: bytes per node scaled from the sample to the
/// region, the remote part, and the score.
pub fn place(region: &mut HotRegion, placement: PagePlacement, thread_nodes: &IdList) {
    let scale = if placement.sampled_pages == 0 {
        0.0
    } else {
        region.bytes() as f64 / placement.sampled_pages as f64
    };
    region.bytes_by_node = placement
        .pages_by_node
        .iter()
        .map(|(&node, &pages)| (node, (pages as f64 * scale).round() as u64))
        .collect();
    let resident = region.resident_bytes();
    region.remote_bytes = (!thread_nodes.is_empty()).then(|| {
        region
            .bytes_by_node
            .iter()
            .filter(|(node, _)| !thread_nodes.contains(**node))
            .map(|(_, bytes)| bytes)
            .sum()
    });
    let remote_share = match (region.remote_bytes, resident) {
        (Some(remote), r) if r > 0 => remote as f64 / r as f64,
        _ => 0.0,
    };
    region.score = region.access_percent / 100.0 * remote_share * kind_weight(region);
    region.placement = Some(placement);
}

/// Read-only memory (code, `.rodata`, the vDSO) counts half. Every core
/// that reads it keeps its own copy in its caches and none is ever
/// invalidated, so remote read-only memory costs only on cache misses;
/// written memory costs a remote invalidation at every write, the
/// incident's price. A region not yet named counts in full.
pub fn kind_weight(region: &HotRegion) -> f64 {
    use numasleuth_model::process::MemoryKind;
    match region.name.as_ref().and_then(|n| n.kind) {
        Some(MemoryKind::Text | MemoryKind::Rodata | MemoryKind::Special) => 0.5,
        _ => 1.0,
    }
}

/// Whether a placed region is hot and mostly remote.
pub fn is_hot_remote(region: &HotRegion) -> bool {
    let resident = region.resident_bytes();
    region.access_percent >= HOT_PERCENT
        && resident > 0
        && region
            .remote_bytes
            .is_some_and(|remote| remote as f64 >= REMOTE_SHARE * resident as f64)
}

/// The `top` regions by score, then heat, then size.
pub fn rank(mut regions: Vec<HotRegion>, top: usize) -> Vec<HotRegion> {
    regions.sort_by(|a, b| {
        b.score
            .total_cmp(&a.score)
            .then(b.access_percent.total_cmp(&a.access_percent))
            .then(b.bytes().cmp(&a.bytes()))
            .then(a.start.cmp(&b.start))
    });
    regions.truncate(top);
    regions
}

/// The nodes holding most of a region's resident bytes, largest first.
fn main_nodes(region: &HotRegion) -> Vec<u32> {
    let mut nodes: Vec<(u32, u64)> = region.bytes_by_node.iter().map(|(n, b)| (*n, *b)).collect();
    nodes.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    nodes.into_iter().filter(|(_, b)| *b > 0).map(|(n, _)| n).collect()
}

fn list(nodes: &[u32]) -> String {
    nodes.iter().map(u32::to_string).collect::<Vec<_>>().join(", ")
}

/// The id of the finding [`findings`] raises.
pub const HOT_REMOTE_MEMORY: &str = "hot-remote-memory";

/// `hot-remote-memory`, when a ranked region is hot and mostly remote.
pub fn findings(ranked: &[HotRegion], thread_nodes: &IdList, pid: u32) -> Vec<Finding> {
    let remote: Vec<&HotRegion> = ranked.iter().filter(|r| is_hot_remote(r)).collect();
    let Some(first) = remote.first() else {
        return Vec::new();
    };
    let home = thread_nodes.ids().first().copied().unwrap_or(0);
    let threads_on = if thread_nodes.len() == 1 {
        format!("node {}", list(thread_nodes.ids()))
    } else {
        format!("nodes {}", list(thread_nodes.ids()))
    };
    let evidence = remote
        .iter()
        .take(EVIDENCE_REGIONS)
        .map(|r| region_evidence(r, &threads_on))
        .collect();
    let symbol = first.name.as_ref().and_then(|n| n.symbols.first().cloned());
    let range = format!("{:#x}-{:#x}", first.start, first.end);
    let mut steps = Vec::new();
    if let Some(symbol) = &symbol {
        steps.push(format!(
            "`numasleuth lines -p {pid} --symbol {symbol}` (what shares its cache line)"
        ));
        steps.push(format!(
            "`numasleuth watch -p {pid} --symbol {symbol}` (who writes it, how often)"
        ));
    }
    steps.push(format!(
        "`numasleuth move -p {pid} --range {range} --to-node {home}` (a dry run; add --apply to move, `undo` to move back)"
    ));
    vec![Finding {
        id: HOT_REMOTE_MEMORY,
        severity: Severity::Warning,
        confidence: None,
        title: format!(
            "{} hot region(s) of process {pid} live away from its threads, hottest {}",
            remote.len(),
            describe(first)
        ),
        evidence,
        remedy: format!(
            "Every access to that memory crosses the interconnect. Next: {}. To fix it for good, start the process \
             on the node of its memory or first-touch the data on the node that uses it \
             (`numactl --cpunodebind={home} --membind={home} CMD`).",
            steps.join("; ")
        ),
        incident: Some(incident::REMOTE_GLOBAL),
        explains: Vec::new(),
    }]
}

/// The ranked regions that are hot and mostly remote, in rank order, in
/// the typed form a join step matches other observations against.
pub fn hot_remote_regions(ranked: &[HotRegion], thread_nodes: &IdList) -> Vec<HotRemoteRegion> {
    ranked
        .iter()
        .filter(|r| is_hot_remote(r))
        .map(|r| HotRemoteRegion {
            start: r.start,
            end: r.end,
            access_percent: r.access_percent,
            nodes: main_nodes(r),
            resident_bytes: r.resident_bytes(),
            remote_bytes: r.remote_bytes.unwrap_or(0),
            thread_nodes: thread_nodes.ids().to_vec(),
            name: r.name.clone(),
        })
        .collect()
}

/// What one window of DAMON gave to rank from.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Window {
    pub pid: u32,
    /// How long DAMON watched.
    pub ran_s: f64,
    /// Snapshots that held regions.
    pub snapshots: usize,
}

/// `hot-memory-unseen` (info), when the window ends with nothing to rank:
/// no snapshot held regions, or no region was accessed in
/// [`HOT_PERCENT`] of samples. Without it a short window that saw too
/// little reads as "no hot remote memory", which it does not show.
pub fn unseen(regions: &[HotRegion], window: Window) -> Option<Finding> {
    if regions.iter().any(|r| r.access_percent >= HOT_PERCENT) {
        return None;
    }
    let Window { pid, ran_s, snapshots } = window;
    let hottest = regions.iter().map(|r| r.access_percent).fold(0.0f64, f64::max);
    let seen = if regions.is_empty() {
        format!("DAMON gave no regions of process {pid} in {ran_s:.1} s ({snapshots} snapshot(s) held any)")
    } else {
        format!(
            "none of process {pid}'s {} regions was accessed in {HOT_PERCENT:.0}% of DAMON's samples over {ran_s:.1} s ({snapshots} snapshots); the hottest in {hottest:.0}%",
            regions.len()
        )
    };
    Some(Finding {
        id: "hot-memory-unseen",
        severity: Severity::Info,
        title: format!("DAMON saw too few accesses in {ran_s:.0} s to rank process {pid}'s memory"),
        evidence: vec![Evidence::new(MEASURED_DAMON, seen)
            .with("ran_s", ran_s)
            .with("snapshots", snapshots as u64)
            .with("regions", regions.len() as u64)
            .with("hottest_access_percent", hottest)],
        remedy: format!(
            "This window shows neither hot remote memory nor its absence. DAMON sees an access only when the CPU walks the page tables (a TLB miss), so memory a busy thread keeps in its TLB can look cold for a while. Next: `numasleuth hotpages -p {pid} --duration 30s` while the workload is busy; `numasleuth hotlines -p {pid}` samples the threads' accesses instead."
        ),
        incident: Some(incident::REMOTE_GLOBAL),
        explains: Vec::new(),
        confidence: None,
    })
}

fn describe(r: &HotRegion) -> String {
    let name = r
        .name
        .as_ref()
        .map(|n| format!(" ({})", n.describe()))
        .unwrap_or_default();
    format!("{:#x}-{:#x}{name}", r.start, r.end)
}

/// Where `hotpages`' numbers come from: DAMON's sampling, run by
/// numasleuth, and move_pages.
pub const MEASURED_DAMON: &str = "measured:damon";

fn region_evidence(r: &HotRegion, threads_on: &str) -> Evidence {
    let nodes = main_nodes(r);
    let on = match nodes.len() {
        1 => format!("node {}", list(&nodes)),
        _ => format!("nodes {}", list(&nodes)),
    };
    let sampled = r.placement.as_ref().map_or(0, |p| p.sampled_pages);
    Evidence::new(
        MEASURED_DAMON,
        format!(
            "{} is accessed in {:.0}% of samples and lives on {on}, while the process's threads run on {threads_on}",
            describe(r),
            r.access_percent
        ),
    )
    .with("start", r.start)
    .with("end", r.end)
    .with("access_percent", r.access_percent)
    .with("nr_accesses", r.nr_accesses)
    .with("age", r.age)
    .with("remote_bytes", r.remote_bytes.unwrap_or(0))
    .with("resident_bytes", r.resident_bytes())
    .with("nodes", nodes)
    .with("sampled_pages", sampled)
}

#[cfg(test)]
#[path = "hotpages_tests.rs"]
mod tests;
