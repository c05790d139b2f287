//! What `hotpages` gathers and reports: DAMON's regions of one process over
//! a run, where a sample of each hot region's pages lives, and what the
//! region is (ELF section and symbols, heap, a thread's stack, anonymous or
//! file memory).
//!
//! Raw readings ([`DamonSnapshot`], [`PagePlacement`]) come from the probe
//! and kernel crates; `analyze::hotpages` turns them into ranked
//! [`HotRegion`]s, and the CLI attaches each region's [`RegionName`].

use numasleuth_parse::sysfs::damon::{DamonAttrs, DamonRegion};
use serde::Serialize;

use crate::process::{MemoryKind, NodeCounts};
use crate::stop::RunSpan;

/// DAMON's regions at one moment of the run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DamonSnapshot {
    /// Since monitoring started.
    pub at_ms: u64,
    pub regions: Vec<DamonRegion>,
}

/// Everything one run collected, before any judgement.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct HotpagesRaw {
    pub pid: u32,
    pub attrs: DamonAttrs,
    pub snapshots: Vec<DamonSnapshot>,
    pub span: RunSpan,
    /// The kdamond's kernel thread and its CPU time (utime + stime, in
    /// clock ticks) at the start and the end, when readable.
    pub kdamond_pid: Option<u32>,
    pub kdamond_cpu_ticks: Option<(u64, u64)>,
    pub ticks_per_sec: u64,
    /// Why monitoring ended before its time, when it did (the process
    /// exited).
    pub ended_early: Option<String>,
}

impl HotpagesRaw {
    /// The kdamond's CPU time over the run, in seconds; `None` when either
    /// reading or the tick rate is missing.
    pub fn kdamond_cpu_s(&self) -> Option<f64> {
        let (start, end) = self.kdamond_cpu_ticks.filter(|_| self.ticks_per_sec > 0)?;
        Some(end.saturating_sub(start) as f64 / self.ticks_per_sec as f64)
    }
}

/// Where a sample of a region's pages lives, as move_pages and pagemap
/// said.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct PagePlacement {
    /// Pages of the region asked about (all of them for a small region, an
    /// even spread for a large one).
    pub sampled_pages: u64,
    /// Of those, the pages on each node.
    pub pages_by_node: NodeCounts,
    /// Resident but hidden from move_pages between NUMA-balancing hinting
    /// faults (node unknown).
    pub hinting_fault_pages: u64,
    /// Not resident: never touched, swapped out, the zero page, or no
    /// mapping at that address (DAMON's regions can span small gaps).
    pub other_pages: u64,
}

/// What a region is.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct RegionName {
    /// The kind of the mapping covering most of the region; `None` when no
    /// mapping covers it any more.
    pub kind: Option<MemoryKind>,
    /// The ELF object (or mapped file) it belongs to.
    pub object: Option<String>,
    /// The ELF section covering most of it.
    pub section: Option<String>,
    /// Data symbols in the region, first ones first.
    pub symbols: Vec<String>,
    /// Symbols in the region beyond those listed.
    pub symbols_not_shown: u64,
    /// The thread whose stack this is, when known.
    pub stack_of_tid: Option<u32>,
}

impl RegionName {
    /// In words: ".bss of /app: hot_counter", "heap", "stack of thread 12".
    pub fn describe(&self) -> String {
        let kind = self.kind.map_or("unmapped", MemoryKind::as_str);
        let mut text = match (&self.section, &self.object, self.stack_of_tid) {
            (Some(section), Some(object), _) => format!("{section} of {object}"),
            (_, _, Some(tid)) => format!("stack of thread {tid}"),
            (None, Some(object), _) => format!("{kind} ({object})"),
            _ => kind.to_string(),
        };
        if !self.symbols.is_empty() {
            text.push_str(": ");
            text.push_str(&self.symbols.join(", "));
            if self.symbols_not_shown > 0 {
                text.push_str(&format!(" and {} more", self.symbols_not_shown));
            }
        }
        text
    }
}

/// One region, judged.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct HotRegion {
    pub start: u64,
    pub end: u64,
    /// DAMON's count in the last aggregation: samples (of
    /// `max_nr_accesses`) that found the region accessed.
    pub nr_accesses: u64,
    /// Aggregations the region's access pattern has held.
    pub age: u64,
    /// `nr_accesses` averaged over the second half of the run, each earlier
    /// snapshot weighted by its overlap with this region.
    pub nr_accesses_mean: f64,
    /// `nr_accesses_mean` as a share of the samples per aggregation, 0-100.
    pub access_percent: f64,
    pub placement: Option<PagePlacement>,
    /// Estimated resident bytes per node (the sample scaled to the region).
    pub bytes_by_node: NodeCounts,
    /// Of those, bytes on nodes where none of the process's threads runs;
    /// `None` when no placement is known.
    pub remote_bytes: Option<u64>,
    /// Heat × remoteness: `access_percent / 100` × the remote share of the
    /// resident bytes. Regions are ranked by it.
    pub score: f64,
    pub name: Option<RegionName>,
}

impl HotRegion {
    pub fn bytes(&self) -> u64 {
        self.end - self.start
    }

    pub fn resident_bytes(&self) -> u64 {
        self.bytes_by_node.values().sum()
    }
}

/// A hot region found mostly remote from the process's threads: what a
/// `hotpages` observation hands to a join with other observations (a hot
/// cache line from `hotlines` that lies in it, a symbol `watch` counts), so
/// one finding can name the line, its page's node and the threads at once.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct HotRemoteRegion {
    pub start: u64,
    pub end: u64,
    /// Share of DAMON's samples that found it accessed, 0-100 (the mean
    /// over the run's second half).
    pub access_percent: f64,
    /// Nodes holding its resident bytes, most bytes first.
    pub nodes: Vec<u32>,
    /// Estimated resident bytes, and those on nodes where none of the
    /// process's threads runs.
    pub resident_bytes: u64,
    pub remote_bytes: u64,
    /// Nodes the process's threads run on.
    pub thread_nodes: Vec<u32>,
    /// What it is: ELF object, section and data symbols, or the mapping.
    pub name: Option<RegionName>,
}

impl HotRemoteRegion {
    /// Whether the byte at `address` lies in the region.
    pub fn contains(&self, address: u64) -> bool {
        self.start <= address && address < self.end
    }

    /// The data symbols it holds, the program's own names first.
    pub fn symbols(&self) -> &[String] {
        self.name.as_ref().map_or(&[], |n| n.symbols.as_slice())
    }
}
