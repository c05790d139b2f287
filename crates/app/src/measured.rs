//! What the collectors measured, as the analysis and the documents read
//! it: the measure crate's raw samples become `numasleuth-analyze`'s timing
//! types, which derive every figure and are what `--raw` prints; a
//! buffer's placement becomes the document's placement check; the cycle
//! counter's rate is said with its source. `mem`, `c2c` and `lab` share
//! these.

use numasleuth_analyze::mem::placement_note;
use numasleuth_analyze::mem_document::PlacementCheck;
use numasleuth_analyze::timing::{ByteSamples, TimedSamples};
use numasleuth_measure::bandwidth::BandwidthSamples;
use numasleuth_measure::c2c::PairSamples;
use numasleuth_measure::latency::LatencySamples;
use numasleuth_measure::loaded::{LoadedPoint, LoadedSamples};
use numasleuth_measure::{clock, Placement};

pub fn chase(samples: &LatencySamples) -> TimedSamples {
    TimedSamples {
        elapsed_ns: samples.elapsed_ns.clone(),
        timer_overhead_ns: samples.timer_overhead_ns,
        timer_reads_per_sample: 1,
        ops_per_sample: samples.loads_per_sample as u64,
    }
}

pub fn pair(samples: &PairSamples) -> TimedSamples {
    TimedSamples {
        elapsed_ns: samples.elapsed_ns.clone(),
        timer_overhead_ns: samples.timer_overhead_ns,
        timer_reads_per_sample: samples.timer_reads_per_sample,
        ops_per_sample: samples.transfers_timed_per_sample,
    }
}

pub fn bandwidth(samples: &BandwidthSamples) -> ByteSamples {
    ByteSamples {
        elapsed_ns: samples.elapsed_ns.clone(),
        bytes: samples.bytes.clone(),
    }
}

/// The chase and the load of one loaded-latency point.
pub fn loaded_point(samples: &LoadedSamples, point: &LoadedPoint) -> (TimedSamples, ByteSamples) {
    let chase = TimedSamples {
        elapsed_ns: point.elapsed_ns.clone(),
        timer_overhead_ns: samples.timer_overhead_ns,
        timer_reads_per_sample: 1,
        ops_per_sample: samples.loads_per_sample as u64,
    };
    let load = ByteSamples {
        elapsed_ns: point.elapsed_ns.clone(),
        bytes: point.load_bytes.clone(),
    };
    (chase, load)
}

/// Where a buffer's pages were found against where they were asked for,
/// with analysis' note on it.
pub fn placement_check(what: String, placement: &Placement) -> PlacementCheck {
    let elsewhere: Vec<(u32, usize)> = placement.pages_elsewhere.iter().map(|e| (e.node, e.pages)).collect();
    let note = placement_note(
        placement.verified,
        placement.unverifiable.as_deref(),
        &elsewhere,
        placement.pages_unknown,
    );
    PlacementCheck {
        what,
        node: placement.requested_node,
        pages_checked: placement.pages_checked,
        pages_on_node: placement.pages_on_node,
        verified: placement.verified,
        note,
    }
}

/// Reference cycles per ns when known, and what they are or why not.
pub fn cycles() -> (Option<f64>, String) {
    match clock::cycle_clock(20) {
        Ok(c) => (Some(c.cycles_per_ns), c.source),
        Err(reason) => (None, reason.to_string()),
    }
}
