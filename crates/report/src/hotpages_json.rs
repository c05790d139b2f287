//! `hotpages --json`, schema `numasleuth.hotpages/1`.
//!
//! Kept names: `pid`, `thread_nodes`, `regions[]` with `start`, `end` (hex
//! strings), `nr_accesses`, `age`, `nodes` (estimated resident bytes per
//! node id), `remote_bytes`, `symbols`, `kind`, and `damon` with
//! `sample_us`, `aggr_us`, `min_regions`, `max_regions`; `findings[]` as
//! everywhere. Regions are ranked by `score` (heat × remoteness). Fields may
//! be added, never renamed.

use numasleuth_model::hex::Hex;
use std::collections::BTreeMap;

use numasleuth_analyze::findings::Finding;
use numasleuth_analyze::hotpages::{is_hot_remote, max_nr_accesses};
use numasleuth_model::hotpages::{HotRegion, HotpagesRaw, RegionName};
use numasleuth_parse::sysfs::damon::DamonAttrs;
use serde::Serialize;

pub const SCHEMA: &str = "numasleuth.hotpages/1";

/// Stays in report: it joins the run's values with rows rounded and worded
/// for the reader ([`RegionJson`]).
#[derive(Debug, Serialize)]
pub struct HotpagesJson {
    pub schema: &'static str,
    pub pid: u32,
    pub comm: Option<String>,
    /// Nodes where the process's threads run; memory elsewhere is remote.
    pub thread_nodes: Vec<u32>,
    pub duration_s: f64,
    pub planned_s: Option<f64>,
    pub stopped_early: bool,
    /// Why monitoring ended before its time (the process exited).
    pub ended_early: Option<String>,
    pub damon: DamonJson,
    /// Regions DAMON reported at the end and, of those, the hot ones.
    pub regions_total: usize,
    pub regions_hot: usize,
    pub regions: Vec<RegionJson>,
    pub findings: Vec<Finding>,
    pub notes: Vec<String>,
}

/// The monitoring as set up and what it cost (DAMON's attributes are
/// parse's; the CPU share is the one figure computed for the reader).
#[derive(Debug, Serialize)]
pub struct DamonJson {
    pub operations: &'static str,
    /// The context's attributes, as DAMON took them.
    #[serde(flatten)]
    pub attrs: DamonAttrs,
    /// Samples per aggregation: the most `nr_accesses` can be.
    pub max_nr_accesses: u64,
    pub snapshots: usize,
    pub kdamond_pid: Option<u32>,
    /// The kdamond's CPU time over the run, and as a share of one CPU.
    pub kdamond_cpu_s: Option<f64>,
    pub kdamond_cpu_percent: Option<f64>,
}

/// A reader's view of model's `HotRegion`: its heat and score rounded, its
/// name in words, and analyze's `is_hot_remote`; nowhere in the domain.
#[derive(Debug, Serialize)]
pub struct RegionJson {
    pub start: Hex,
    pub end: Hex,
    pub bytes: u64,
    pub nr_accesses: u64,
    pub nr_accesses_mean: f64,
    pub access_percent: f64,
    pub age: u64,
    /// Estimated resident bytes per node (from `sampled_pages`).
    pub nodes: BTreeMap<u32, u64>,
    pub resident_bytes: u64,
    pub remote_bytes: Option<u64>,
    pub remote: bool,
    pub sampled_pages: u64,
    pub hinting_fault_pages: u64,
    pub score: f64,
    /// What the region is, as model names it (`unmapped`: all empty).
    #[serde(flatten)]
    pub what: RegionName,
    /// The region in words, as the text report names it.
    pub name: String,
}

fn region_json(r: &HotRegion) -> RegionJson {
    let name = r.name.clone().unwrap_or_default();
    RegionJson {
        start: Hex(r.start),
        end: Hex(r.end),
        bytes: r.bytes(),
        nr_accesses: r.nr_accesses,
        nr_accesses_mean: (r.nr_accesses_mean * 100.0).round() / 100.0,
        access_percent: (r.access_percent * 10.0).round() / 10.0,
        age: r.age,
        nodes: r.bytes_by_node.clone(),
        resident_bytes: r.resident_bytes(),
        remote_bytes: r.remote_bytes,
        remote: is_hot_remote(r),
        sampled_pages: r.placement.as_ref().map_or(0, |p| p.sampled_pages),
        hinting_fault_pages: r.placement.as_ref().map_or(0, |p| p.hinting_fault_pages),
        score: (r.score * 1000.0).round() / 1000.0,
        name: name.describe(),
        what: name,
    }
}

/// What the document is built from.
pub struct Parts<'a> {
    pub raw: &'a HotpagesRaw,
    pub comm: Option<String>,
    pub thread_nodes: Vec<u32>,
    pub ranked: &'a [HotRegion],
    pub regions_total: usize,
    pub regions_hot: usize,
    pub findings: Vec<Finding>,
    pub notes: Vec<String>,
}

pub fn build(parts: Parts<'_>) -> HotpagesJson {
    let raw = parts.raw;
    let cpu_s = raw.kdamond_cpu_s();
    let a = &raw.attrs;
    HotpagesJson {
        schema: SCHEMA,
        pid: raw.pid,
        comm: parts.comm,
        thread_nodes: parts.thread_nodes,
        duration_s: raw.span.ran_s,
        planned_s: raw.span.planned_s,
        stopped_early: raw.span.stopped_early,
        ended_early: raw.ended_early.clone(),
        damon: DamonJson {
            operations: "vaddr",
            attrs: *a,
            max_nr_accesses: max_nr_accesses(a),
            snapshots: raw.snapshots.len(),
            kdamond_pid: raw.kdamond_pid,
            kdamond_cpu_s: cpu_s,
            kdamond_cpu_percent: cpu_s
                .filter(|_| raw.span.ran_s > 0.0)
                .map(|s| s / raw.span.ran_s * 100.0),
        },
        regions_total: parts.regions_total,
        regions_hot: parts.regions_hot,
        regions: parts.ranked.iter().map(region_json).collect(),
        findings: parts.findings,
        notes: parts.notes,
    }
}
