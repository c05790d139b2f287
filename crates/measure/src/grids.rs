//! The grids of `c2c` and `mem latency --sizes`: every CPU pair, every
//! buffer size, in turn until a stop request, raw samples kept per step.
//! Medians, matrices and warnings are derived in `numasleuth-analyze`.

use numasleuth_model::stop::Stop;

use crate::buffer::{PageKind, Placement};
use crate::c2c::{measure_pair, HomeLine, Method, PairConfig, PairSamples};
use crate::latency::{ChaseBuffer, LatencySamples, Sampling};
use crate::steps::{self, PhaseError, StepError};

/// One pair of the c2c matrix: indices into the CPU list, `a < b`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Pair {
    pub a: usize,
    pub b: usize,
}

/// Every pair of `cpus` once (A↔B, not also B↔A: the matrix is
/// symmetric), in row order.
pub fn pairs(count: usize) -> Vec<Pair> {
    (0..count)
        .flat_map(|a| (a + 1..count).map(move |b| Pair { a, b }))
        .collect()
}

/// How each pair is timed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PairTiming {
    pub method: Method,
    pub samples: usize,
    pub transfers_per_sample: usize,
}

/// Every pair of `cpus` ping-ponging `line`, in turn until `stop`;
/// `observe` sees each pair before it is timed.
pub fn c2c_pairs(
    line: &HomeLine,
    cpus: &[u32],
    timing: PairTiming,
    stop: &Stop,
    observe: &mut dyn FnMut(&Pair),
) -> Result<Vec<(Pair, PairSamples)>, StepError<Pair>> {
    steps::run(pairs(cpus.len()), stop, observe, |pair| {
        let config = PairConfig {
            method: timing.method,
            cpu_a: cpus[pair.a],
            cpu_b: cpus[pair.b],
            samples: timing.samples,
            transfers_per_sample: timing.transfers_per_sample,
        };
        measure_pair(line, config)
    })
}

/// Where the latency sweep chases: from `cpu`, over buffers on `node`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SweepPlan {
    pub cpu: u32,
    pub node: u32,
    pub pages: PageKind,
    pub sampling: Sampling,
}

/// What one buffer size gave: where its pages really were, and the chase.
#[derive(Debug, Clone, PartialEq)]
pub struct SizeSamples {
    pub placement: Placement,
    pub samples: LatencySamples,
}

/// A chase buffer of each of `sizes_bytes` in turn until `stop`, each
/// freed before the next; `observe` sees each size before it is set up.
pub fn latency_sizes(
    plan: SweepPlan,
    sizes_bytes: &[usize],
    stop: &Stop,
    observe: &mut dyn FnMut(&usize),
) -> Result<Vec<(usize, SizeSamples)>, StepError<usize, PhaseError>> {
    steps::run(sizes_bytes.to_vec(), stop, observe, |&size| {
        // A seed per size: each buffer gets its own random cycle.
        let buffer =
            ChaseBuffer::allocate(size, plan.node, plan.pages, 0x5eed ^ size as u64).map_err(PhaseError::Setup)?;
        let samples = buffer.measure(plan.cpu, plan.sampling).map_err(PhaseError::Run)?;
        Ok(SizeSamples {
            placement: buffer.placement().clone(),
            samples,
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_pair_once_in_row_order() {
        let got: Vec<(usize, usize)> = pairs(4).iter().map(|p| (p.a, p.b)).collect();
        assert_eq!(got, vec![(0, 1), (0, 2), (0, 3), (1, 2), (1, 3), (2, 3)]);
        assert!(pairs(1).is_empty());
    }

    #[test]
    fn a_stopped_sweep_keeps_the_sizes_chased() {
        let cpu = crate::affinity::allowed_cpus().unwrap()[0];
        let plan = SweepPlan {
            cpu,
            node: 0,
            pages: PageKind::Small,
            sampling: Sampling {
                samples: 2,
                sample_ns: 100_000,
            },
        };
        let stop = Stop::new();
        let mut seen = Vec::new();
        let done = latency_sizes(plan, &[4096, 8192, 16384], &stop, &mut |&size| {
            seen.push(size);
            if size == 8192 {
                stop.request();
            }
        })
        .unwrap();
        assert_eq!(seen, vec![4096, 8192]);
        let sizes: Vec<usize> = done.iter().map(|d| d.0).collect();
        assert_eq!(sizes, vec![4096, 8192]);
        assert!(done
            .iter()
            .all(|(size, s)| s.samples.size_bytes == *size && s.samples.elapsed_ns.len() == 2));
    }

    #[test]
    fn a_buffer_too_small_fails_in_setup() {
        let plan = SweepPlan {
            cpu: crate::affinity::allowed_cpus().unwrap()[0],
            node: 0,
            pages: PageKind::Small,
            sampling: Sampling {
                samples: 1,
                sample_ns: 1000,
            },
        };
        let err = latency_sizes(plan, &[64], &Stop::new(), &mut |_| {}).unwrap_err();
        assert_eq!(err.step, 64);
        assert!(matches!(err.error, PhaseError::Setup(_)), "{:?}", err.error);
    }
}
