//! `c2c`'s document: the core-to-core matrix, how it was timed and what
//! it suggests about the declared topology, as `numasleuth.c2c/1` writes
//! it (report puts the schema over it; `report::c2c_json` documents the
//! names). Text and CSV render this same value.

use serde::Serialize;

use crate::siblings::SuspectedSiblings;
use crate::stats::Summary;
use crate::timing::TimedSamples;

/// How a transfer was timed; `cas` and `one-way` in the JSON.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum C2cMethod {
    /// A CAS ping-pong, the round trip halved.
    Cas,
    /// A store timed by the loading CPU.
    OneWay,
}

impl std::fmt::Display for C2cMethod {
    /// The JSON's word, for the CSV's row kind (`c2c-cas`).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            C2cMethod::Cas => "cas",
            C2cMethod::OneWay => "one-way",
        })
    }
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct C2cDocument {
    pub cpus: Vec<u32>,
    pub home_node: u32,
    pub method: C2cMethod,
    /// How CPUs were chosen: "all", "core", "cache" or "node".
    pub sampling: &'static str,
    pub latency_ns: Vec<Vec<Option<Summary>>>,
    pub transfers_per_sample: usize,
    pub timer_overhead_ns: Option<f64>,
    pub cycles_per_ns: Option<f64>,
    pub cycles_note: String,
    pub placement_verified: bool,
    /// The topology as measured against the topology as declared.
    pub suspected_siblings: Vec<SuspectedSiblings>,
    pub warnings: Vec<String>,
    /// With `--raw`: every kept sample per pair (same indexing as
    /// `latency_ns`), for statistics of the reader's own choosing.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub raw_latency_ns: Option<Vec<Vec<Option<Vec<f64>>>>>,
    /// With `--raw`: each pair's samples as measured (elapsed ns, clock
    /// overhead, clock reads and transfers per sample), indexed like
    /// `latency_ns`; `crate::timing` derives both figures
    /// above from these.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub raw_timing: Option<Vec<Vec<Option<TimedSamples>>>>,
}
