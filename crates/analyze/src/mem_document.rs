//! `mem`'s document: what it measured, summarised, with the placement
//! proof and warnings, as `numasleuth.mem/2` writes it (report puts the
//! schema over it; `report::mem_json` documents the names). Text and CSV
//! render this same value, so every output says the same thing.

use serde::Serialize;

use crate::interconnect::Interconnect;
use crate::latency_check::CurveCheck;
use crate::stats::Summary;
use crate::timing::MemRaw;
use crate::working_set::WorkingSet;

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MemDocument {
    pub latency_ns: Option<LatencyMatrix>,
    pub bandwidth_bytes_per_sec: Option<BandwidthMatrix>,
    pub latency_sweep: Option<Sweep>,
    pub loaded_latency: Option<Loaded>,
    /// Reference cycles per ns, when known; `cycles_note` says what they
    /// are or why they are unknown.
    pub cycles_per_ns: Option<f64>,
    pub cycles_note: String,
    pub timer_overhead_ns: Option<f64>,
    pub page_kind: String,
    pub placement_verified: bool,
    pub placements: Vec<PlacementCheck>,
    pub interconnect: Interconnect,
    /// Matrix cells whose spread did not hold, measured again (their
    /// figures are from the last time); empty when every cell held.
    pub measured_again: Vec<MeasuredAgain>,
    pub warnings: Vec<String>,
    /// With `--raw`: every cell's samples as measured, from which
    /// `crate::timing` derives the figures above.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub raw: Option<MemRaw>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LatencyMatrix {
    /// Memory (target) nodes: the columns.
    pub nodes: Vec<u32>,
    /// CPU nodes: the rows.
    pub initiators: Vec<u32>,
    /// The CPU each row's chase ran on.
    pub cpus: Vec<u32>,
    pub buffer_bytes: usize,
    #[serde(flatten)]
    pub working_set: WorkingSet,
    pub matrix: Vec<Vec<Option<Summary>>>,
    /// The chase at twice the working set, from the first row's CPU to its
    /// own node (or the first column).
    pub self_check: Option<CurveCheck>,
    /// Why the self-check did not run, when it did not.
    pub self_check_skipped: Option<String>,
    /// The size search before the matrix (`crate::flat_search`):
    /// each comparison of a size with twice it, smallest first; empty when
    /// none ran.
    pub size_search: Vec<CurveCheck>,
    /// Why the search did not run, or ended before the curve flattened.
    pub size_search_note: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BandwidthMatrix {
    pub nodes: Vec<u32>,
    pub initiators: Vec<u32>,
    /// The CPUs each row's threads ran on.
    pub cpus: Vec<Vec<u32>>,
    pub mix: &'static str,
    pub non_temporal_stores: bool,
    pub buffer_bytes_per_thread: usize,
    #[serde(flatten)]
    pub working_set: WorkingSet,
    pub matrix: Vec<Vec<Option<Summary>>>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Sweep {
    pub cpu: u32,
    pub node: u32,
    pub points: Vec<SweepPoint>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SweepPoint {
    pub size_bytes: usize,
    pub latency_ns: Option<Summary>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Loaded {
    pub latency_cpu: u32,
    pub load_cpus: Vec<u32>,
    pub node: u32,
    /// The chase buffer and the load threads' buffers, each sized by the
    /// rule (or `--size`, which sizes both).
    pub chase_working_set: WorkingSet,
    pub load_working_set: WorkingSet,
    pub points: Vec<LoadedPoint>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LoadedPoint {
    pub delay_ns: u64,
    pub bandwidth_bytes_per_sec: Option<Summary>,
    pub latency_ns: Option<Summary>,
}

/// A matrix cell measured again because its figure did not hold
/// (`crate::confidence::holds`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MeasuredAgain {
    /// `latency` or `bandwidth`.
    pub matrix: &'static str,
    pub initiator: u32,
    pub node: u32,
    /// How many more times than once it was measured.
    pub times: u32,
}

/// Where one buffer's pages were found.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PlacementCheck {
    pub what: String,
    pub node: u32,
    pub pages_checked: usize,
    pub pages_on_node: usize,
    pub verified: bool,
    pub note: Option<String>,
}

impl MemDocument {
    pub fn new() -> Self {
        MemDocument {
            latency_ns: None,
            bandwidth_bytes_per_sec: None,
            latency_sweep: None,
            loaded_latency: None,
            cycles_per_ns: None,
            cycles_note: String::new(),
            timer_overhead_ns: None,
            page_kind: String::new(),
            placement_verified: false,
            placements: Vec::new(),
            interconnect: Interconnect::default(),
            measured_again: Vec::new(),
            warnings: Vec::new(),
            raw: None,
        }
    }
}

impl Default for MemDocument {
    fn default() -> Self {
        Self::new()
    }
}
