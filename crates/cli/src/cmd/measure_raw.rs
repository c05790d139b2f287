//! What the collectors measured, as the analysis reads it: the measure
//! crate's raw samples become `numasleuth-analyze`'s timing types, which
//! derive every figure and are what `--raw` prints.

use numasleuth_analyze::timing::{ByteSamples, TimedSamples};
use numasleuth_measure::bandwidth::BandwidthSamples;
use numasleuth_measure::c2c::PairSamples;
use numasleuth_measure::latency::LatencySamples;
use numasleuth_measure::loaded::{LoadedPoint, LoadedSamples};

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
