//! The lab's documents, one per experiment, as `numasleuth.lab.*/1`
//! write them (report puts each one's schema over it; `report::lab_json`
//! documents the names): where and how the run went, analyze's rows and
//! the sentences that say what they mean.

use serde::Serialize;

use crate::lab::{false_sharing, locks, remote_global};

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
    pub run: RunInfo,
    pub results: Vec<locks::Row>,
    pub lock_node: u32,
    pub placement_verified: bool,
    pub meaning: Vec<String>,
    pub warnings: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RemoteGlobalDocument {
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
