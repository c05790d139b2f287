//! The `numasleuth.c2c/1` document.
//!
//! Schema (fields may be added, these stay): `schema`, `cpus`, `home_node`,
//! `latency_ns`: a square matrix indexed like `cpus`, with null on the
//! diagonal and for pairs not measured, otherwise `{median, p10, p90,
//! samples}` in ns per one-way transfer of the line. Pairs are measured
//! once and mirrored, so the matrix is symmetric. `suspected_siblings`
//! lists pairs far faster than the other pairs of their kind that the
//! kernel declares separate cores (`cpus`, `latency_ns`, `median_ns`,
//! `kind`, `message`).

use numasleuth_analyze::siblings::SuspectedSiblings;
use numasleuth_analyze::stats::Summary;
use numasleuth_analyze::timing::TimedSamples;
use serde::Serialize;

pub const SCHEMA: &str = "numasleuth.c2c/1";

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
    pub schema: &'static str,
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
    /// `latency_ns`; `numasleuth_analyze::timing` derives both figures
    /// above from these.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub raw_timing: Option<Vec<Vec<Option<TimedSamples>>>>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schema_keeps_its_documented_names() {
        let s = Summary {
            median: 50.0,
            p10: 48.0,
            p90: 55.0,
            samples: 7,
        };
        let doc = C2cDocument {
            schema: SCHEMA,
            cpus: vec![0, 1],
            home_node: 0,
            method: C2cMethod::Cas,
            sampling: "all",
            latency_ns: vec![vec![None, Some(s)], vec![Some(s), None]],
            transfers_per_sample: 1000,
            timer_overhead_ns: Some(20.0),
            cycles_per_ns: None,
            cycles_note: String::new(),
            placement_verified: true,
            suspected_siblings: Vec::new(),
            warnings: Vec::new(),
            raw_latency_ns: None,
            raw_timing: None,
        };
        let json: serde_json::Value = serde_json::from_str(&crate::export::plain_json(&doc).unwrap()).unwrap();
        assert_eq!(json["schema"], "numasleuth.c2c/1");
        assert_eq!(json["cpus"], serde_json::json!([0, 1]));
        assert_eq!(json["home_node"], 0);
        assert!(json["latency_ns"][0][0].is_null());
        assert_eq!(
            json["latency_ns"][0][1],
            serde_json::json!({"median": 50.0, "p10": 48.0, "p90": 55.0, "samples": 7})
        );
        assert_eq!(json["latency_ns"][1][0], json["latency_ns"][0][1]);
    }
}
