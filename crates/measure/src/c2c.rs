//! Core-to-core latency: how long a cache line takes to move between two
//! CPUs, with the line's memory on a node the caller chooses.
//!
//! Two methods:
//! - **CAS ping-pong**: the two CPUs take turns to compare-and-swap one
//!   counter; a round trip moves the line there and back, so half of it is
//!   one transfer. Needs no clock agreement between CPUs. The waiter polls
//!   with loads and only then CASes (test-and-test-and-set), as spinlocks
//!   do; core-to-core-latency instead retries the CAS itself, which adds
//!   contention between the two CPUs to the figure.
//! - **One-way store/load**: the sender stores a timestamp, the receiver
//!   spins on loads and subtracts its own clock reading. It times a single
//!   transfer but relies on CLOCK_MONOTONIC agreeing across CPUs, and
//!   includes one clock read (calibrated and subtracted).

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Barrier;
use std::time::Instant;

use serde::{Deserialize, Serialize};

use crate::affinity;
use crate::buffer::{NodeBuffer, PageKind, Placement};
use crate::clock;
use crate::error::MeasureError;
use crate::gate::{spawn_failed, StartGate};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Method {
    Cas,
    OneWay,
}

/// Spins before a waiting thread starts yielding; keeps a run with both
/// threads on one CPU (a cpuset of one) from stalling for scheduler ticks.
/// The spin itself has no PAUSE: PAUSE delays noticing the line's arrival
/// (by up to ~140 cycles on recent Intel cores), which would be measured
/// as transfer latency.
const SPINS_BEFORE_YIELD: u32 = 1 << 16;

/// Offsets of the contended line and the one-way acknowledgement line,
/// 128 bytes apart so adjacent-line prefetch does not couple them.
const ACK_OFFSET_BYTES: usize = 128;

/// The contended line, bound to a home node.
#[derive(Debug)]
pub struct HomeLine {
    buffer: NodeBuffer,
}

impl HomeLine {
    pub fn allocate(home_node: u32) -> Result<Self, MeasureError> {
        Ok(HomeLine {
            buffer: NodeBuffer::allocate(4096, home_node, PageKind::Small)?,
        })
    }

    pub fn placement(&self) -> &Placement {
        self.buffer.placement()
    }

    fn word(&self, byte_offset: usize) -> &AtomicU64 {
        // SAFETY: the buffer is page aligned and 4096 bytes long, the
        // offsets used are 8-byte aligned and below 4096, and the memory is
        // only ever accessed through these atomics while `self` lives.
        unsafe { &*self.buffer.as_ptr().add(byte_offset).cast::<AtomicU64>() }
    }
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PairConfig {
    pub method: Method,
    pub cpu_a: u32,
    pub cpu_b: u32,
    pub samples: usize,
    /// Round trips (CAS) or transfers (one-way) averaged into one sample.
    pub transfers_per_sample: usize,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PairSamples {
    pub method: Method,
    pub cpu_a: u32,
    pub cpu_b: u32,
    pub transfers_per_sample: usize,
    pub timer_overhead_ns: f64,
    /// One figure per kept sample: ns for one transfer of the line.
    pub latency_ns: Vec<f64>,
    /// The counter's final value, which proves the protocol ran every step.
    pub final_count: u64,
}

pub fn measure_pair(line: &HomeLine, config: PairConfig) -> Result<PairSamples, MeasureError> {
    if config.samples == 0 || config.transfers_per_sample == 0 {
        return Err(MeasureError::Invalid("need at least one sample of one transfer".into()));
    }
    let (data, ack) = (line.word(0), line.word(ACK_OFFSET_BYTES));
    data.store(0, Ordering::SeqCst);
    ack.store(0, Ordering::SeqCst);
    let timer_overhead_ns = clock::timer_overhead_ns();
    // One extra, discarded sample warms both caches and the path between.
    let rounds = (config.samples + 1) * config.transfers_per_sample;
    let barrier = Barrier::new(2);
    let pin_failed = AtomicBool::new(false);
    let origin = Instant::now();
    // Both sides pin before the barrier and check the other did too: one
    // side running alone would spin forever waiting for its partner.
    let side = |cpu: u32, work: &(dyn Fn() -> Vec<f64> + Sync)| {
        let pinned = affinity::pin_current_thread(cpu);
        if pinned.is_err() {
            pin_failed.store(true, Ordering::SeqCst);
        }
        barrier.wait();
        pinned?;
        if pin_failed.load(Ordering::SeqCst) {
            return Ok(Vec::new());
        }
        Ok::<_, MeasureError>(work())
    };
    let per_batch = config.transfers_per_sample;
    let a_work = move || match config.method {
        Method::Cas => cas_side(data, 0, rounds, per_batch),
        Method::OneWay => send_side(data, ack, rounds, origin),
    };
    let b_work = move || match config.method {
        Method::Cas => cas_side(data, 1, rounds, per_batch),
        Method::OneWay => receive_side(data, ack, rounds, per_batch, origin),
    };
    // Each side waits for the other; if the second cannot start, the first
    // must not begin waiting for it.
    let gate = StartGate::default();
    let gated = |cpu: u32, work: &(dyn Fn() -> Vec<f64> + Sync)| {
        if gate.wait() {
            side(cpu, work)
        } else {
            Ok(Vec::new())
        }
    };
    let (a_side, b_side) = std::thread::scope(|scope| {
        let a = std::thread::Builder::new()
            .name("numasleuth-c2c-a".into())
            .spawn_scoped(scope, || gated(config.cpu_a, &a_work));
        let b = std::thread::Builder::new()
            .name("numasleuth-c2c-b".into())
            .spawn_scoped(scope, || gated(config.cpu_b, &b_work));
        match (a, b) {
            (Ok(a), Ok(b)) => {
                gate.open();
                Ok((a.join(), b.join()))
            }
            (a, b) => {
                gate.abort();
                let error = [a.err(), b.err()].into_iter().flatten().next();
                Err(error.map_or_else(
                    || MeasureError::Thread("a core-to-core thread did not start".into()),
                    spawn_failed,
                ))
            }
        }
    })?;
    let panicked = || MeasureError::Thread("a core-to-core thread panicked".into());
    let (a_side, b_side) = (a_side.map_err(|_| panicked())?, b_side.map_err(|_| panicked())?);
    let (a_batches, b_batches) = (a_side?, b_side?);
    let (batches_ns, per_batch) = match config.method {
        // A round trip is two transfers; each side saw every round trip.
        Method::Cas => (a_batches, 2 * config.transfers_per_sample),
        Method::OneWay => (b_batches, config.transfers_per_sample),
    };
    let overhead_per_batch = match config.method {
        Method::Cas => timer_overhead_ns,
        Method::OneWay => timer_overhead_ns * config.transfers_per_sample as f64,
    };
    let latency_ns = batches_ns
        .iter()
        .skip(1)
        .map(|ns| (ns - overhead_per_batch).max(0.0) / per_batch as f64)
        .collect();
    Ok(PairSamples {
        method: config.method,
        cpu_a: config.cpu_a,
        cpu_b: config.cpu_b,
        transfers_per_sample: config.transfers_per_sample,
        timer_overhead_ns,
        latency_ns,
        final_count: data.load(Ordering::SeqCst),
    })
}

fn wait_until(mut ready: impl FnMut() -> bool) {
    let mut spins = 0u32;
    while !ready() {
        if spins < SPINS_BEFORE_YIELD {
            spins += 1;
        } else {
            std::thread::yield_now();
        }
    }
}

/// Side `parity` moves the counter from `2k + parity` to `2k + parity + 1`,
/// so the sides strictly alternate. Returns ns per batch of round trips.
fn cas_side(word: &AtomicU64, parity: u64, rounds: usize, per_batch: usize) -> Vec<f64> {
    let mut batches = Vec::with_capacity(rounds / per_batch);
    let mut start = Instant::now();
    for round in 0..rounds as u64 {
        let from = 2 * round + parity;
        // Test, then test-and-set: polling with loads keeps the line shared
        // while waiting, so the CAS that follows is one clean transfer and
        // not a fight between two CPUs both demanding the line exclusively.
        wait_until(|| {
            word.load(Ordering::Relaxed) == from
                && word
                    .compare_exchange(from, from + 1, Ordering::AcqRel, Ordering::Relaxed)
                    .is_ok()
        });
        if (round as usize + 1).is_multiple_of(per_batch) {
            batches.push(start.elapsed().as_nanos() as f64);
            start = Instant::now();
        }
    }
    batches
}

/// The sender: wait for the receiver's acknowledgement, then store a fresh
/// timestamp (ns since `origin`, plus one so it is never 0).
fn send_side(data: &AtomicU64, ack: &AtomicU64, rounds: usize, origin: Instant) -> Vec<f64> {
    for round in 0..rounds as u64 {
        wait_until(|| ack.load(Ordering::Acquire) == round);
        data.store(origin.elapsed().as_nanos() as u64 + 1, Ordering::Release);
    }
    Vec::new()
}

/// The receiver: spin until the timestamp changes, take its own clock, and
/// sum the differences per batch.
fn receive_side(data: &AtomicU64, ack: &AtomicU64, rounds: usize, per_batch: usize, origin: Instant) -> Vec<f64> {
    let mut batches = Vec::with_capacity(rounds / per_batch);
    let (mut last, mut sum_ns) = (0u64, 0.0);
    for round in 0..rounds {
        let mut sent = 0;
        wait_until(|| {
            sent = data.load(Ordering::Acquire);
            sent != last
        });
        let received = origin.elapsed().as_nanos() as u64 + 1;
        sum_ns += received.saturating_sub(sent) as f64;
        last = sent;
        ack.store(round as u64 + 1, Ordering::Release);
        if (round + 1) % per_batch == 0 {
            batches.push(sum_ns);
            sum_ns = 0.0;
        }
    }
    batches
}

#[cfg(test)]
mod tests {
    use super::*;

    fn two_cpus() -> (u32, u32) {
        let cpus = affinity::allowed_cpus().unwrap();
        (cpus[0], *cpus.last().unwrap())
    }

    #[test]
    fn ping_pong_alternates_every_round() {
        let (a, b) = two_cpus();
        let line = HomeLine::allocate(0).unwrap();
        assert!(line.placement().verified);
        let config = PairConfig {
            method: Method::Cas,
            cpu_a: a,
            cpu_b: b,
            samples: 3,
            transfers_per_sample: 50,
        };
        let samples = measure_pair(&line, config).unwrap();
        assert_eq!(samples.latency_ns.len(), 3);
        // Each of 4 × 50 round trips moved the counter twice, in turn.
        assert_eq!(samples.final_count, 2 * 4 * 50);
    }

    #[test]
    fn one_way_times_every_transfer() {
        let (a, b) = two_cpus();
        let line = HomeLine::allocate(0).unwrap();
        let config = PairConfig {
            method: Method::OneWay,
            cpu_a: a,
            cpu_b: b,
            samples: 2,
            transfers_per_sample: 20,
        };
        let samples = measure_pair(&line, config).unwrap();
        assert_eq!(samples.latency_ns.len(), 2);
        // Clamped at 0 only if the clock's own cost swallowed a whole sample.
        assert!(
            samples.latency_ns.iter().all(|ns| ns.is_finite() && *ns > 0.0),
            "{:?}",
            samples.latency_ns
        );
    }

    #[test]
    fn a_bad_cpu_fails_cleanly() {
        let line = HomeLine::allocate(0).unwrap();
        let config = PairConfig {
            method: Method::Cas,
            cpu_a: 0,
            cpu_b: 1 << 20,
            samples: 1,
            transfers_per_sample: 1,
        };
        assert!(measure_pair(&line, config).is_err());
    }
}
