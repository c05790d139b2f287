//! The core-to-core matrix from each pair's raw timing: the pairs are
//! measured once (A↔B) and mirrored, each cell the pair's summary.

use crate::stats::Summary;
use crate::timing::TimedSamples;

/// A square matrix over the CPU list; `None` where nothing was measured
/// (the diagonal, pairs a stop left out, or a pair with no usable sample).
pub type Grid<T> = Vec<Vec<Option<T>>>;

/// The matrix and what its warnings and `--raw` need.
#[derive(Debug, Clone, PartialEq)]
pub struct Matrix {
    pub latency_ns: Grid<Summary>,
    /// Each pair's ns per transfer, only when raw samples are kept.
    pub raw_ns: Grid<Vec<f64>>,
    pub raw_timing: Grid<TimedSamples>,
    /// The clock's own cost, as the last pair measured it.
    pub timer_overhead_ns: Option<f64>,
    /// Samples no longer than the clock's own cost, over all pairs.
    pub short_samples: usize,
}

/// The `cpus`×`cpus` matrix from each measured pair `(a, b, timing)`
/// (indices into the CPU list), mirrored; `keep_raw` keeps the samples.
pub fn matrix(cpus: usize, pairs: Vec<(usize, usize, TimedSamples)>, keep_raw: bool) -> Matrix {
    let mut m = Matrix {
        latency_ns: vec![vec![None; cpus]; cpus],
        raw_ns: vec![vec![None; cpus]; cpus],
        raw_timing: vec![vec![None; cpus]; cpus],
        timer_overhead_ns: None,
        short_samples: 0,
    };
    for (a, b, timing) in pairs {
        m.timer_overhead_ns = Some(timing.timer_overhead_ns);
        let summary = timing.summary();
        m.short_samples += timing.at_or_below_overhead();
        (m.latency_ns[a][b], m.latency_ns[b][a]) = (summary, summary);
        if keep_raw {
            let ns = timing.ns_per_op();
            (m.raw_ns[a][b], m.raw_ns[b][a]) = (Some(ns.clone()), Some(ns));
            (m.raw_timing[a][b], m.raw_timing[b][a]) = (Some(timing.clone()), Some(timing));
        }
    }
    m
}

#[cfg(test)]
mod tests {
    use super::*;

    fn timing(elapsed_ns: Vec<u64>) -> TimedSamples {
        TimedSamples {
            elapsed_ns,
            timer_overhead_ns: 10.0,
            timer_reads_per_sample: 1,
            ops_per_sample: 10,
        }
    }

    #[test]
    fn pairs_are_mirrored_and_the_gaps_stay_empty() {
        let m = matrix(3, vec![(0, 1, timing(vec![1010, 1010, 1010]))], false);
        let cell = m.latency_ns[0][1].expect("measured pair");
        assert_eq!(m.latency_ns[1][0], Some(cell));
        assert!((cell.median - 100.0).abs() < 1e-9, "{cell:?}");
        // A pair a stop left out, and the diagonal, have no figure.
        assert_eq!(m.latency_ns[0][2], None);
        assert_eq!(m.latency_ns[1][1], None);
        assert_eq!(m.raw_ns[0][1], None);
        assert_eq!(m.timer_overhead_ns, Some(10.0));
    }

    #[test]
    fn raw_samples_and_short_ones_are_counted() {
        let m = matrix(2, vec![(0, 1, timing(vec![5, 1010]))], true);
        assert_eq!(m.short_samples, 1);
        assert_eq!(m.raw_ns[1][0], m.raw_ns[0][1]);
        assert_eq!(m.raw_ns[0][1].as_ref().map(Vec::len), Some(2));
        assert!(m.raw_timing[1][0].is_some());
    }
}
