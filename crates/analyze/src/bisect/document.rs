//! `bisect`'s document, as `numasleuth.bisect/1` writes it (report puts
//! the schema over it): the candidate pages, the baseline, every step
//! (which pages moved, the readings, the change), the culprit page(s) with
//! the symbols on them, and whether every page went back where it was.
//! App fills it as the search goes; text renders the same value.

use std::collections::BTreeMap;

use numasleuth_model::hex::Hex;
use serde::Serialize;

use super::{Readings, Step, VerdictKind};
use crate::page_move::Target;

#[derive(Debug, Clone, Serialize)]
pub struct StepRecord {
    /// The candidate pages moved: `pages` of them from `first_address`.
    pub first_address: Hex,
    pub pages: u64,
    /// Pages a fresh query found on the other node after the move.
    pub pages_moved: u64,
    /// The median reading with those pages moved.
    pub metric: f64,
    pub readings: Readings,
    /// (metric − baseline) / baseline.
    pub change: f64,
    /// How far from the baseline median (relative to it) every reading had
    /// to lie to be separated from the baseline: its extreme reading plus
    /// `--min-change`, in the direction of the change.
    pub threshold: f64,
    pub changed: bool,
    /// Every reading lay beyond the baseline's range by more than
    /// `--min-change`.
    pub separated: bool,
    /// The share of (step reading, baseline reading) pairs that differ by
    /// more than `--min-change` of the baseline median, in the direction
    /// where more do.
    pub pairs_beyond: f64,
    /// Batches of `rounds` readings taken (more than one when the evidence
    /// was in between; at most `batches_max`).
    pub batches: u32,
    /// Baseline readings the step was compared with.
    pub baseline_readings: u64,
    /// Measured again because neither half of a changed set changed it.
    pub recheck: bool,
}

impl StepRecord {
    pub fn new(step: &Step, addresses: &[u64]) -> Self {
        StepRecord {
            first_address: Hex(addresses.get(step.pages.start).copied().unwrap_or(0)),
            pages: step.pages.len() as u64,
            pages_moved: step.pages_moved,
            metric: step.readings.median,
            readings: step.readings.clone(),
            change: step.change.relative,
            threshold: step.change.threshold,
            changed: step.change.significant,
            separated: step.change.separated,
            pairs_beyond: step.change.pairs_beyond,
            batches: step.batches,
            baseline_readings: step.baseline_readings as u64,
            recheck: step.recheck,
        }
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct CulpritPage {
    pub address: String,
    /// Where the page was, and where moving it changed the metric.
    pub home_node: u32,
    pub away_node: u32,
    /// Data symbols on the page, demangled.
    pub symbols: Vec<String>,
    /// `name (section, N bytes)` for each symbol, for people.
    pub symbol_details: Vec<String>,
    /// The object the page belongs to, or what it is (heap, anon).
    pub object: Option<String>,
}

/// Where every page was at the end.
#[derive(Debug, Clone, Serialize)]
pub struct Restore {
    pub pages: u64,
    pub home: u64,
    pub sent_home_at_end: u64,
    pub still_away: u64,
    pub elsewhere: u64,
}

#[derive(Debug, Clone, Serialize)]
pub struct BisectDocument {
    pub pid: u32,
    pub comm: String,
    pub targets: Vec<Target>,
    pub metric_cmd: String,
    pub lower_is_better: bool,
    pub settle_ms: u64,
    pub rounds: u32,
    /// The smallest relative change of the median that counts.
    pub min_change: f64,
    /// The most batches of `rounds` readings one step may take.
    pub batches_max: u32,
    pub page_bytes: u64,
    pub candidate_pages: u64,
    /// Pages of the targets that cannot take part, counted by why.
    pub left_out: BTreeMap<String, u64>,
    /// False for the dry run (no `--apply`): nothing moved.
    pub applied: bool,
    pub baseline: Option<Readings>,
    pub steps: Vec<StepRecord>,
    /// `page`, `together`, `no_effect`, or `null` when the search stopped.
    pub verdict: Option<VerdictKind>,
    pub culprit_pages: Vec<CulpritPage>,
    /// Every page is where it was before the first move.
    pub restored: bool,
    pub restore: Option<Restore>,
    /// The journal, when it was kept (a page may still be away).
    pub journal: Option<String>,
    /// Why the search stopped early, if it did.
    pub stopped: Option<String>,
    /// Sets of pages sent away and back, including one whose step an
    /// interrupt or error cut short.
    pub sets_moved: u64,
    /// The metric's update period, timed while the baseline settled, and
    /// how far apart each step's readings were taken; `null` for the dry
    /// run (and the period when it could not be timed).
    pub metric_period_ms: Option<u64>,
    pub reading_spacing_ms: Option<u64>,
    pub notes: Vec<String>,
}
