//! What `probe-latency`'s schedule records per slice of its timeline,
//! handed from the collector (`measure::probe_latency`) to the spike
//! analysis (`analyze::latency_spikes`).

use serde::Serialize;

/// One slice of the run's timeline, by intended start time.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Bucket {
    pub start_s: f64,
    pub count: u64,
    pub max_corrected_ns: u64,
    pub max_uncorrected_ns: u64,
    /// Intended start of the operation with the worst corrected latency.
    pub max_at_s: f64,
}
