//! Bandwidth: threads pinned to the CPUs of a source node stream through
//! buffers bound to a target node, started together on a barrier.
//!
//! Each thread owns its own buffer (no false sharing, no shared page
//! tables to contend on); a sample is the wall time from the barrier that
//! starts every thread to the barrier the last one reaches, so a slow
//! thread lowers the figure instead of hiding. Threads start through the
//! one runner (`crate::runner`): pinned inside, behind a start gate.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{mpsc, Barrier};
use std::time::Instant;

use serde::{Deserialize, Serialize};

use crate::buffer::{NodeBuffer, PageKind, Placement};
use crate::clock;
use crate::error::MeasureError;
use crate::latency::Sampling;
use crate::runner::run_gated;
use crate::stream::{Mix, NON_TEMPORAL_STORES};

#[derive(Debug, Clone, PartialEq)]
pub struct BandwidthConfig {
    pub mix: Mix,
    /// One thread per CPU listed.
    pub cpus: Vec<u32>,
    pub node: u32,
    /// Shared out equally among the threads.
    pub total_bytes: usize,
    pub pages: PageKind,
    pub sampling: Sampling,
}

/// What one bandwidth cell measured, before any statistics.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BandwidthSamples {
    pub mix: Mix,
    pub cpus: Vec<u32>,
    pub node: u32,
    pub buffer_bytes_per_thread: usize,
    pub passes_per_sample: usize,
    pub non_temporal_stores: bool,
    /// Wall time of each kept sample, from the barrier that starts every
    /// thread to the one the last reaches.
    pub elapsed_ns: Vec<u64>,
    /// Bytes read plus written by all threads in each kept sample.
    pub bytes: Vec<u64>,
    /// One entry per thread's buffer.
    pub placements: Vec<Placement>,
}

pub fn measure(config: &BandwidthConfig) -> Result<BandwidthSamples, MeasureError> {
    if config.cpus.is_empty() {
        return Err(MeasureError::Invalid("a bandwidth run needs at least one CPU".into()));
    }
    let threads = config.cpus.len();
    let per_thread = (config.total_bytes / threads).max(4096);
    let barrier = Barrier::new(threads + 1);
    let stop = AtomicBool::new(false);
    let passes = AtomicUsize::new(1);
    let bytes_done = AtomicUsize::new(0);
    let (setup_tx, setup_rx) = mpsc::channel::<Result<Placement, MeasureError>>();
    let (barrier, stop, passes, bytes_done) = (&barrier, &stop, &passes, &bytes_done);
    let workers: Vec<_> = config
        .cpus
        .iter()
        .map(|&cpu| {
            let setup_tx = setup_tx.clone();
            (cpu, move |pinned: Result<(), MeasureError>| {
                stream_worker(
                    config,
                    per_thread,
                    pinned,
                    &setup_tx,
                    (barrier, stop, passes, bytes_done),
                )
            })
        })
        .collect();
    drop(setup_tx);
    let (outcome, _) = run_gated("numasleuth-bw", workers, |_| {
        let mut placements = Vec::with_capacity(threads);
        let mut failure = None;
        for result in setup_rx.iter().take(threads) {
            match result {
                Ok(placement) => placements.push(placement),
                Err(e) => failure = failure.or(Some(e)),
            }
        }
        if let Some(e) = failure {
            stop.store(true, Ordering::Release);
            barrier.wait();
            return Err(e);
        }
        let round = |passes_now: usize| {
            passes.store(passes_now, Ordering::Release);
            bytes_done.store(0, Ordering::Relaxed);
            barrier.wait();
            let start = Instant::now();
            barrier.wait();
            (clock::elapsed_ns(start), bytes_done.load(Ordering::Relaxed) as u64)
        };
        // Warm-up round, discarded; it also says how long a pass takes.
        let (warm_ns, _) = round(1);
        let passes_per_sample =
            ((config.sampling.sample_ns as f64 / warm_ns.max(1) as f64).ceil() as usize).clamp(1, 1 << 20);
        let (mut elapsed_ns, mut bytes) = (Vec::new(), Vec::new());
        for _ in 0..config.sampling.samples {
            let (ns, moved) = round(passes_per_sample);
            elapsed_ns.push(ns);
            bytes.push(moved);
        }
        stop.store(true, Ordering::Release);
        barrier.wait();
        Ok(BandwidthSamples {
            mix: config.mix,
            cpus: config.cpus.clone(),
            node: config.node,
            buffer_bytes_per_thread: per_thread,
            passes_per_sample,
            non_temporal_stores: config.mix == Mix::Write && NON_TEMPORAL_STORES,
            elapsed_ns,
            bytes,
            placements,
        })
    })?;
    outcome
}

/// What the controller and the streaming threads share.
type Shared<'a> = (&'a Barrier, &'a AtomicBool, &'a AtomicUsize, &'a AtomicUsize);

/// One streaming thread: its own buffer on the target node, then rounds
/// between the controller's barriers until told to stop. A thread whose
/// pinning or buffer failed still meets every barrier, so none is left
/// waiting, and its error reaches the controller through `setup`.
fn stream_worker(
    config: &BandwidthConfig,
    per_thread: usize,
    pinned: Result<(), MeasureError>,
    setup: &mpsc::Sender<Result<Placement, MeasureError>>,
    (barrier, stop, passes, bytes_done): Shared<'_>,
) {
    let buffer = pinned.and_then(|()| NodeBuffer::allocate(per_thread, config.node, config.pages));
    let mut buffer = match buffer {
        Ok(buffer) => {
            let _ = setup.send(Ok(buffer.placement().clone()));
            Some(buffer)
        }
        Err(e) => {
            let _ = setup.send(Err(e));
            None
        }
    };
    loop {
        barrier.wait();
        if stop.load(Ordering::Acquire) {
            return;
        }
        let mut bytes = 0;
        if let Some(buffer) = buffer.as_mut() {
            for _ in 0..passes.load(Ordering::Acquire) {
                bytes += config.mix.pass(buffer.as_words_mut());
            }
        }
        bytes_done.fetch_add(bytes, Ordering::Relaxed);
        barrier.wait();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::affinity;

    #[test]
    fn every_thread_streams_and_every_buffer_is_placed() {
        let cpus = affinity::allowed_cpus().unwrap();
        for mix in [Mix::Read, Mix::TwoReadsOneWrite, Mix::OneReadOneWrite, Mix::Write] {
            let config = BandwidthConfig {
                mix,
                cpus: cpus.clone(),
                node: 0,
                total_bytes: cpus.len() * (96 << 10),
                pages: PageKind::Small,
                sampling: Sampling {
                    samples: 2,
                    sample_ns: 100_000,
                },
            };
            let samples = measure(&config).unwrap();
            assert_eq!(samples.elapsed_ns.len(), 2);
            assert_eq!(samples.placements.len(), cpus.len());
            assert!(samples.placements.iter().all(|p| p.verified));
            // Each pass moves the whole per-thread buffer (it divides by 2 and 3).
            let per_pass = cpus.len() * (96 << 10);
            let expected = (per_pass * samples.passes_per_sample) as u64;
            assert_eq!(samples.bytes, vec![expected; 2], "{mix:?}");
        }
    }

    #[test]
    fn a_bad_cpu_is_an_error_and_does_not_hang() {
        let config = BandwidthConfig {
            mix: Mix::Read,
            cpus: vec![affinity::allowed_cpus().unwrap()[0], 1 << 20],
            node: 0,
            total_bytes: 1 << 16,
            pages: PageKind::Small,
            sampling: Sampling {
                samples: 1,
                sample_ns: 1000,
            },
        };
        assert!(measure(&config).is_err());
    }
}
