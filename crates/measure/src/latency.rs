//! Idle latency: one pinned thread chases a random cycle through memory on
//! a chosen node and times batches of dependent loads.

use std::time::Instant;

use serde::{Deserialize, Serialize};

use crate::affinity;
use crate::buffer::{NodeBuffer, PageKind, Placement};
use crate::chase::ChaseCycle;
use crate::clock;
use crate::error::MeasureError;

/// How long and how often to sample.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Sampling {
    /// Kept samples (a warm-up sample before them is discarded).
    pub samples: usize,
    /// Target duration of one sample.
    pub sample_ns: u64,
}

/// What one latency cell measured, before any statistics.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LatencySamples {
    pub cpu: u32,
    pub node: u32,
    pub size_bytes: usize,
    pub loads_per_sample: usize,
    pub warmup_loads: usize,
    /// Subtracted from each sample's elapsed time before dividing by loads.
    pub timer_overhead_ns: f64,
    /// One figure per kept sample: ns per dependent load.
    pub latency_ns: Vec<f64>,
}

/// A chase buffer on one node, its cycle built once and walked from any CPU.
#[derive(Debug)]
pub struct ChaseBuffer {
    buffer: NodeBuffer,
}

impl ChaseBuffer {
    /// Allocates on `node` and writes a random cycle (from `seed`) into it.
    pub fn allocate(size_bytes: usize, node: u32, pages: PageKind, seed: u64) -> Result<Self, MeasureError> {
        let mut buffer = NodeBuffer::allocate(size_bytes, node, pages)?;
        if ChaseCycle::build(buffer.as_words_mut(), seed).is_none() {
            return Err(MeasureError::Invalid(format!(
                "a {size_bytes}-byte buffer is too small to chase; use at least 128 bytes"
            )));
        }
        Ok(ChaseBuffer { buffer })
    }

    pub fn placement(&self) -> &Placement {
        self.buffer.placement()
    }

    pub fn size_bytes(&self) -> usize {
        self.buffer.len_bytes()
    }

    /// Samples the cycle from a thread pinned to `cpu`.
    pub fn measure(&self, cpu: u32, sampling: Sampling) -> Result<LatencySamples, MeasureError> {
        let (node, size_bytes, words) = (self.buffer.node(), self.buffer.len_bytes(), self.buffer.as_words());
        affinity::on_cpu(cpu, move || {
            // SAFETY: `allocate` built the cycle in exactly these words, and
            // nothing writes to a ChaseBuffer's words after that.
            let mut cycle = unsafe { ChaseCycle::resume(words) };
            sample_cycle(&mut cycle, sampling, cpu, node, size_bytes)
        })
    }
}

/// Samples a built cycle on the current (already pinned) thread.
pub fn sample_cycle(
    cycle: &mut ChaseCycle<'_>,
    sampling: Sampling,
    cpu: u32,
    node: u32,
    size_bytes: usize,
) -> LatencySamples {
    // Warm-up: one lap (capped) puts the buffer's lines and TLB entries in
    // the state a steady chase sees; it is never timed.
    let warmup_loads = cycle.lines().min(1 << 21);
    cycle.walk(warmup_loads);
    let timer_overhead_ns = clock::timer_overhead_ns();
    let loads_per_sample = loads_for(cycle, sampling.sample_ns);
    let mut latency_ns = Vec::with_capacity(sampling.samples);
    // The first timed sample is discarded as well: frequency ramps and the
    // first pass of a size larger than the warm-up lap land there.
    for index in 0..=sampling.samples {
        let start = Instant::now();
        cycle.walk(loads_per_sample);
        let elapsed_ns = start.elapsed().as_nanos() as f64;
        if index > 0 {
            latency_ns.push((elapsed_ns - timer_overhead_ns).max(0.0) / loads_per_sample as f64);
        }
    }
    LatencySamples {
        cpu,
        node,
        size_bytes,
        loads_per_sample,
        warmup_loads,
        timer_overhead_ns,
        latency_ns,
    }
}

/// How many loads make a sample of about `sample_ns`, from a short probe;
/// the loaded-latency curve sizes its samples the same way.
pub(crate) fn loads_for(cycle: &mut ChaseCycle<'_>, sample_ns: u64) -> usize {
    let probe_loads = 4096;
    let start = Instant::now();
    cycle.walk(probe_loads);
    let ns_per_load = (start.elapsed().as_nanos() as f64 / probe_loads as f64).max(0.1);
    ((sample_ns as f64 / ns_per_load) as usize).clamp(probe_loads, 1 << 30)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn samples_have_the_asked_shape() {
        let cpu = affinity::allowed_cpus().unwrap()[0];
        let buffer = ChaseBuffer::allocate(64 << 10, 0, PageKind::Transparent, 42).unwrap();
        assert!(buffer.placement().verified);
        let sampling = Sampling {
            samples: 3,
            sample_ns: 200_000,
        };
        let samples = buffer.measure(cpu, sampling).unwrap();
        assert_eq!(samples.latency_ns.len(), 3);
        assert_eq!((samples.cpu, samples.node, samples.size_bytes), (cpu, 0, 64 << 10));
        // Clamped at 0 only if the clock's own cost swallowed a whole sample.
        assert!(
            samples.latency_ns.iter().all(|ns| ns.is_finite() && *ns > 0.0),
            "{:?}",
            samples.latency_ns
        );
        assert_eq!(samples.warmup_loads, 1024, "one lap of 1024 lines");
    }
}
