//! The `numasleuth.lab.*/1` documents, one per experiment.
//!
//! Fields may be added; these keep their names and meanings:
//! - `numasleuth.lab.false_sharing/1`: `results[]` with `layout`
//!   ("packed"/"padded"), `op` ("atomic"/"store"), `threads`, `placement`
//!   ("compact"/"spread") and `ops_per_sec` `{median, p10, p90, samples}`.
//! - `numasleuth.lab.locks/1`: `results[]` with `lock`
//!   ("ticket"/"mcs"/"mutex"/"atomic"), `load` ("empty"/"one-load"),
//!   `threads`, `placement`, `ops_per_sec` (lock/unlock pairs).
//! - `numasleuth.lab.remote_global/1`: `results[]` with `global`
//!   ("local"/"remote"/"per-thread"), `threads`, `ops_per_sec`; top-level
//!   `ns_per_invalidation` (remote, or null when it could not be measured)
//!   and `warnings`.
//!
//! Every result also carries `raw`: each kept sample's span in ns and the
//! operations each thread completed, from which every rate is computed.

use numasleuth_analyze::lab::{false_sharing, locks, remote_global};
use serde::Serialize;

pub const FALSE_SHARING_SCHEMA: &str = "numasleuth.lab.false_sharing/1";
pub const LOCKS_SCHEMA: &str = "numasleuth.lab.locks/1";
pub const REMOTE_GLOBAL_SCHEMA: &str = "numasleuth.lab.remote_global/1";

/// What every lab run says about where and how it ran.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RunInfo {
    pub cpu_model: Option<String>,
    pub nodes: Vec<u32>,
    pub allowed_cpus: Vec<u32>,
    pub samples_per_config: usize,
    /// Length of one timed sample (a warm-up sample is run and dropped).
    pub sample_ms: u64,
    /// More threads than allowed CPUs were asked for (`--oversubscribe`).
    pub oversubscribed: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FalseSharingDocument {
    pub schema: &'static str,
    pub run: RunInfo,
    pub results: Vec<false_sharing::Row>,
    /// Node whose memory held the counters.
    pub counters_node: u32,
    pub placement_verified: bool,
    pub meaning: Vec<String>,
    pub warnings: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LocksDocument {
    pub schema: &'static str,
    pub run: RunInfo,
    pub results: Vec<locks::Row>,
    pub lock_node: u32,
    pub placement_verified: bool,
    pub meaning: Vec<String>,
    pub warnings: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RemoteGlobalDocument {
    pub schema: &'static str,
    pub run: RunInfo,
    /// The workers' node (node A).
    pub node: u32,
    /// Node B, where the remote global lives; null on one node.
    pub remote_node: Option<u32>,
    pub writes_per_op: u32,
    pub local_words_per_op: usize,
    pub results: Vec<remote_global::Row>,
    /// Median ns for one transfer of a line homed on the remote node
    /// between two workers' CPUs; null when there is no remote node.
    pub ns_per_invalidation: Option<f64>,
    pub cycles_per_invalidation: Option<f64>,
    /// The same for a line homed on the workers' own node.
    pub ns_per_invalidation_local: Option<f64>,
    pub transfers: Vec<remote_global::Transfer>,
    pub models: Vec<remote_global::Model>,
    pub cycles_per_ns: Option<f64>,
    pub cycles_note: String,
    pub meaning: Vec<String>,
    pub warnings: Vec<String>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use numasleuth_analyze::lab::Raw;

    #[test]
    fn false_sharing_keeps_its_documented_names() {
        let rows = false_sharing::rows(vec![false_sharing::Measured {
            layout: numasleuth_model::lab::Layout::Packed,
            op: numasleuth_model::lab::Op::Atomic,
            placement: numasleuth_model::lab::Placement::Compact,
            threads: 2,
            cpus: vec![0, 1],
            counts_verified: true,
            raw: vec![Raw {
                span_ns: 1000,
                ops_per_thread: vec![10, 20],
                cpu_ns_per_thread: vec![900, 1000],
            }],
        }]);
        let doc = FalseSharingDocument {
            schema: FALSE_SHARING_SCHEMA,
            run: RunInfo {
                cpu_model: None,
                nodes: vec![0],
                allowed_cpus: vec![0, 1],
                samples_per_config: 1,
                sample_ms: 1,
                oversubscribed: false,
            },
            results: rows,
            counters_node: 0,
            placement_verified: true,
            meaning: Vec::new(),
            warnings: Vec::new(),
        };
        let json: serde_json::Value = serde_json::from_str(&crate::export::plain_json(&doc).unwrap()).unwrap();
        let row = &json["results"][0];
        assert_eq!(json["schema"], "numasleuth.lab.false_sharing/1");
        assert_eq!(row["layout"], "packed");
        assert_eq!(row["op"], "atomic");
        assert_eq!(row["threads"], 2);
        assert_eq!(row["placement"], "compact");
        assert_eq!(row["ops_per_sec"]["median"], 3e7);
        assert_eq!(row["ops_per_sec"]["samples"], 1);
        assert_eq!(row["raw"][0]["ops_per_thread"], serde_json::json!([10, 20]));
        assert_eq!(row["cpu_share"]["median"], 0.9);
    }
}
