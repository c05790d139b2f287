//! Figures from raw timings: the collectors (`numasleuth-measure`) return
//! what the clock said, unclamped, and this module alone turns it into
//! nanoseconds per operation and bytes per second. `mem --json --raw` and
//! `c2c --json --raw` carry these raw values, so any run can be replayed
//! here and give the same numbers.

use serde::{Deserialize, Serialize};

use crate::stats::{summarize, Summary};

/// One timed series as measured: the elapsed time of each kept sample,
/// the cost of the clock itself, and how much each sample did.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TimedSamples {
    /// Wall time of each kept sample, as read (warm-up samples dropped).
    pub elapsed_ns: Vec<u64>,
    /// What one clock read costs, measured on the same thread.
    pub timer_overhead_ns: f64,
    /// Clock reads inside each sample's elapsed time: 1 for a timed
    /// batch, one per transfer for one-way core-to-core timing.
    pub timer_reads_per_sample: u64,
    /// Operations each sample timed (dependent loads, line transfers).
    pub ops_per_sample: u64,
}

impl TimedSamples {
    /// Nanoseconds per operation for each sample: the clock's own cost
    /// subtracted, then divided by the operations. A sample shorter than
    /// the clock's cost (a noisy overhead estimate) counts as 0 rather
    /// than a negative time.
    pub fn ns_per_op(&self) -> Vec<f64> {
        let overhead_ns = self.timer_overhead_ns * self.timer_reads_per_sample as f64;
        let ops = self.ops_per_sample.max(1) as f64;
        self.elapsed_ns
            .iter()
            .map(|&ns| (ns as f64 - overhead_ns).max(0.0) / ops)
            .collect()
    }

    /// Samples no longer than the clock's own cost: their figure says
    /// nothing about the operation, only that the overhead estimate was high.
    pub fn at_or_below_overhead(&self) -> usize {
        let overhead_ns = self.timer_overhead_ns * self.timer_reads_per_sample as f64;
        self.elapsed_ns.iter().filter(|&&ns| ns as f64 <= overhead_ns).count()
    }

    pub fn summary(&self) -> Option<Summary> {
        summarize(&self.ns_per_op())
    }
}

/// Bytes moved in each sample and the wall time each took.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ByteSamples {
    pub elapsed_ns: Vec<u64>,
    pub bytes: Vec<u64>,
}

impl ByteSamples {
    /// Bytes per second of each sample; a sample of zero time has no rate
    /// and is left out (it cannot happen with a working clock).
    pub fn bytes_per_sec(&self) -> Vec<f64> {
        self.elapsed_ns
            .iter()
            .zip(&self.bytes)
            .filter(|(&ns, _)| ns > 0)
            .map(|(&ns, &bytes)| bytes as f64 / (ns as f64 / 1e9))
            .collect()
    }

    pub fn summary(&self) -> Option<Summary> {
        summarize(&self.bytes_per_sec())
    }
}

/// `mem`'s raw samples, cell by cell, in the order they were measured.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct MemRaw {
    pub latency: Vec<RawLatency>,
    pub bandwidth: Vec<RawBandwidth>,
    pub loaded: Vec<RawLoaded>,
    /// The self-check's chase at twice the working set
    /// (`latency_ns.self_check`), when it ran.
    #[serde(default)]
    pub self_check: Vec<RawLatency>,
}

/// One latency cell (matrix) or point (`--sizes` sweep).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RawLatency {
    pub cpu: u32,
    pub node: u32,
    pub size_bytes: usize,
    pub chase: TimedSamples,
}

/// One bandwidth cell: all threads of a node streaming from one node.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RawBandwidth {
    pub cpus: Vec<u32>,
    pub node: u32,
    pub samples: ByteSamples,
}

/// One loaded-latency point: the chase and the load beside it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RawLoaded {
    pub delay_ns: u64,
    pub chase: TimedSamples,
    pub load: ByteSamples,
}

#[cfg(test)]
#[path = "timing_tests.rs"]
mod tests;
