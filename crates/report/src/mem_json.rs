//! The `numasleuth.mem/2` document: what `mem` measured, summarised, with
//! the placement proof and warnings. Text and CSV render this same value,
//! so every output says the same thing.
//!
//! Schema (fields may be added, these stay):
//! `schema`, `latency_ns` {`nodes`, `matrix`}, `bandwidth_bytes_per_sec`
//! {`nodes`, `matrix`, `mix`}, `placement_verified`, `warnings`.
//! `matrix[i][j]` is initiator `initiators[i]` (CPUs of that node) reading
//! memory of node `nodes[j]`; cells are `{median, p10, p90, samples}` or
//! null. A key a command did not measure is null.
//!
//! Every matrix says how big its buffers were and why: `working_set_bytes`
//! (all threads' buffers together) and `sized_from` (`{"cache": "L3",
//! "bytes": …, "cpus": "0-15", "factor": 4, "count": 1}`, or null when no
//! cache size was known), with `chosen_by` (`rule`, `size`, `free-memory`,
//! `fallback`, `self-check`) and the `notes` that explain a choice below the rule. The
//! latency matrix also carries `self_check`, the chase at twice the size
//! (`flattened` false when they differ by more than 10%), or
//! `self_check_skipped` with the reason it did not run. Before the matrix,
//! the rule's size is doubled while a chase at twice it is slower by more
//! than 10% (at most 8×, within free memory): `size_search` lists each
//! comparison and `size_search_note` why it did not run or stopped early;
//! a size raised so is `chosen_by` `self-check`.
//!
//! `measured_again` lists the matrix cells whose spread did not hold the
//! first time and were measured again (`matrix`, `initiator`, `node`,
//! `times`); the matrices hold each cell's last measurement.

use numasleuth_analyze::interconnect::Interconnect;
use numasleuth_analyze::latency_check::CurveCheck;
use numasleuth_analyze::stats::Summary;
use numasleuth_analyze::timing::MemRaw;
use numasleuth_analyze::working_set::WorkingSet;
use serde::Serialize;

pub const SCHEMA: &str = "numasleuth.mem/2";

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MemDocument {
    pub schema: &'static str,
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
    /// `numasleuth_analyze::timing` derives the figures above.
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
    /// The size search before the matrix (`numasleuth_analyze::flat_search`):
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
/// (`numasleuth_analyze::confidence::holds`).
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
            schema: SCHEMA,
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

#[cfg(test)]
mod tests {
    use super::*;

    fn cell(median: f64) -> Option<Summary> {
        Some(Summary {
            median,
            p10: median - 1.0,
            p90: median + 1.0,
            samples: 7,
        })
    }

    /// Pins the documented names: a consumer written against the issue's
    /// example must keep working.
    #[test]
    fn schema_keeps_its_documented_names() {
        let mut doc = MemDocument::new();
        doc.latency_ns = Some(LatencyMatrix {
            nodes: vec![0, 1, 2],
            initiators: vec![0, 1],
            cpus: vec![0, 2],
            buffer_bytes: 1 << 28,
            working_set: numasleuth_analyze::working_set::choose(None, &[], 1, Some(1 << 28)),
            self_check: None,
            self_check_skipped: None,
            size_search: Vec::new(),
            size_search_note: None,
            matrix: vec![
                vec![cell(92.1), cell(140.0), cell(200.0)],
                vec![cell(140.0), cell(92.0), cell(210.0)],
            ],
        });
        doc.placement_verified = true;
        let json: serde_json::Value = serde_json::from_str(&crate::export::plain_json(&doc).unwrap()).unwrap();
        assert_eq!(json["schema"], "numasleuth.mem/2");
        assert_eq!(json["latency_ns"]["nodes"], serde_json::json!([0, 1, 2]));
        let first = &json["latency_ns"]["matrix"][0][0];
        assert_eq!(first["median"], 92.1);
        assert_eq!(first["p10"], 91.1);
        assert_eq!(first["p90"], 93.1);
        assert_eq!(first["samples"], 7);
        assert_eq!(json["latency_ns"]["matrix"].as_array().unwrap().len(), 2);
        assert!(json["bandwidth_bytes_per_sec"].is_null());
        assert_eq!(json["placement_verified"], true);
        assert_eq!(json["latency_ns"]["working_set_bytes"], 1 << 28);
        assert_eq!(json["latency_ns"]["chosen_by"], "size");
        assert!(json["latency_ns"]["sized_from"].is_null());
        assert_eq!(json["warnings"], serde_json::json!([]));
    }
}
