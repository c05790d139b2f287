//! Loaded latency, in the manner of MLC's `--loaded_latency`: one thread
//! chases pointers while the others read memory as fast as an injected
//! delay lets them, so the curve shows latency rising as bandwidth nears
//! the node's limit.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use numasleuth_model::stop::Stop;
use serde::{Deserialize, Serialize};

use crate::affinity;
use crate::buffer::{NodeBuffer, PageKind, Placement};
use crate::chase::ChaseCycle;
use crate::clock;
use crate::error::MeasureError;
use crate::latency::{loads_for, Sampling};
use crate::runner::run_gated;
use crate::stream::read_sum;

/// Words read between two delays: one 4 KiB page.
const CHUNK_WORDS: usize = 512;

#[derive(Debug, Clone)]
pub struct LoadedConfig {
    pub latency_cpu: u32,
    pub load_cpus: Vec<u32>,
    pub node: u32,
    pub latency_bytes: usize,
    pub load_bytes_per_thread: usize,
    /// Busy-wait after each 4 KiB a load thread reads; 0 = flat out.
    pub delays_ns: Vec<u64>,
    pub pages: PageKind,
    pub sampling: Sampling,
    /// Polled before each delay: a stop ends the curve with the points
    /// measured so far.
    pub stop: Stop,
}

/// One delay's raw samples: per kept sample, how long the chase of
/// `loads_per_sample` loads took and what the load threads read meanwhile.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LoadedPoint {
    pub delay_ns: u64,
    pub elapsed_ns: Vec<u64>,
    pub load_bytes: Vec<u64>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LoadedSamples {
    pub latency_cpu: u32,
    pub load_cpus: Vec<u32>,
    pub node: u32,
    pub timer_overhead_ns: f64,
    /// Dependent loads the chase times in each sample.
    pub loads_per_sample: usize,
    pub points: Vec<LoadedPoint>,
    /// The chase buffer first, then one per load thread.
    pub placements: Vec<Placement>,
}

/// A counter alone on its own 128-byte block, so counting does not make
/// the load threads share a line (adjacent-line prefetch pairs 64-byte lines).
#[repr(align(128))]
#[derive(Default)]
struct Padded(AtomicU64);

pub fn measure(config: &LoadedConfig) -> Result<LoadedSamples, MeasureError> {
    let running = AtomicBool::new(false);
    let stop = AtomicBool::new(false);
    let delay_ns = AtomicU64::new(0);
    let counters: Vec<Padded> = config.load_cpus.iter().map(|_| Padded::default()).collect();
    let (setup_tx, setup_rx) = mpsc::channel::<Result<Placement, MeasureError>>();
    let (running, stop, delay_ns) = (&running, &stop, &delay_ns);
    let workers: Vec<_> = config
        .load_cpus
        .iter()
        .zip(&counters)
        .map(|(&cpu, counter)| {
            let setup_tx = setup_tx.clone();
            (cpu, move |pinned: Result<(), MeasureError>| {
                let buffer =
                    pinned.and_then(|()| NodeBuffer::allocate(config.load_bytes_per_thread, config.node, config.pages));
                match buffer {
                    Ok(buffer) => {
                        let _ = setup_tx.send(Ok(buffer.placement().clone()));
                        load_loop(buffer.as_words(), running, stop, delay_ns, &counter.0);
                    }
                    Err(e) => {
                        let _ = setup_tx.send(Err(e));
                    }
                }
            })
        })
        .collect();
    drop(setup_tx);
    let (result, _) = run_gated("numasleuth-load", workers, |_| {
        let result = run_latency_side(config, &setup_rx, running, delay_ns, &counters);
        stop.store(true, Ordering::Release);
        result
    })?;
    result
}

fn run_latency_side(
    config: &LoadedConfig,
    setup_rx: &mpsc::Receiver<Result<Placement, MeasureError>>,
    running: &AtomicBool,
    delay_ns: &AtomicU64,
    counters: &[Padded],
) -> Result<LoadedSamples, MeasureError> {
    let mut chase = NodeBuffer::allocate(config.latency_bytes, config.node, config.pages)?;
    let mut placements = vec![chase.placement().clone()];
    for result in setup_rx.iter().take(config.load_cpus.len()) {
        placements.push(result?);
    }
    let words = chase.as_words_mut();
    let latency_cpu = config.latency_cpu;
    affinity::on_cpu(latency_cpu, move || {
        let mut cycle = ChaseCycle::build(words, 0x5eed)
            .ok_or_else(|| MeasureError::Invalid("the latency buffer is too small to chase".into()))?;
        cycle.walk(cycle.lines().min(1 << 21));
        let timer_overhead_ns = clock::timer_overhead_ns();
        let loads = loads_for(&mut cycle, config.sampling.sample_ns);
        let total = || counters.iter().map(|c| c.0.load(Ordering::Relaxed)).sum::<u64>();
        let mut points = Vec::with_capacity(config.delays_ns.len());
        for &delay in &config.delays_ns {
            if config.stop.requested() {
                break;
            }
            delay_ns.store(delay, Ordering::Release);
            running.store(true, Ordering::Release);
            let mut point = LoadedPoint {
                delay_ns: delay,
                elapsed_ns: Vec::new(),
                load_bytes: Vec::new(),
            };
            // Sample 0 lets the load threads reach their pace; discarded.
            for index in 0..=config.sampling.samples {
                let bytes_before = total();
                let start = Instant::now();
                cycle.walk(loads);
                let elapsed_ns = clock::elapsed_ns(start);
                let bytes = total().wrapping_sub(bytes_before);
                if index > 0 {
                    point.elapsed_ns.push(elapsed_ns);
                    point.load_bytes.push(bytes);
                }
            }
            running.store(false, Ordering::Release);
            points.push(point);
        }
        Ok(LoadedSamples {
            latency_cpu,
            load_cpus: config.load_cpus.clone(),
            node: config.node,
            timer_overhead_ns,
            loads_per_sample: loads,
            points,
            placements,
        })
    })?
}

/// Reads the buffer page by page while `running`, waiting `delay_ns` after
/// each page; idles (sleeping, so it does not steal the chase's CPU time on
/// small machines) while not running.
fn load_loop(words: &[u64], running: &AtomicBool, stop: &AtomicBool, delay_ns: &AtomicU64, counter: &AtomicU64) {
    let mut offset = 0;
    while !stop.load(Ordering::Acquire) {
        if !running.load(Ordering::Acquire) {
            std::thread::sleep(Duration::from_micros(200));
            continue;
        }
        let delay = Duration::from_nanos(delay_ns.load(Ordering::Relaxed));
        let end = (offset + CHUNK_WORDS).min(words.len());
        std::hint::black_box(read_sum(&words[offset..end]));
        counter.fetch_add(((end - offset) * 8) as u64, Ordering::Relaxed);
        offset = if end == words.len() { 0 } else { end };
        if !delay.is_zero() {
            let start = Instant::now();
            while start.elapsed() < delay {
                std::hint::spin_loop();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_point_per_delay_with_samples_and_placements() {
        let cpus = affinity::allowed_cpus().unwrap();
        let load_cpus = if cpus.len() > 1 {
            cpus[1..].to_vec()
        } else {
            cpus.clone()
        };
        let config = LoadedConfig {
            latency_cpu: cpus[0],
            load_cpus: load_cpus.clone(),
            node: 0,
            latency_bytes: 1 << 20,
            load_bytes_per_thread: 1 << 20,
            delays_ns: vec![0, 5000],
            pages: PageKind::Transparent,
            sampling: Sampling {
                samples: 2,
                sample_ns: 500_000,
            },
            stop: Stop::new(),
        };
        let samples = measure(&config).unwrap();
        assert_eq!(samples.points.len(), 2);
        assert_eq!(samples.points[1].delay_ns, 5000);
        assert!(samples
            .points
            .iter()
            .all(|p| p.elapsed_ns.len() == 2 && p.load_bytes.len() == 2));
        assert_eq!(samples.placements.len(), 1 + load_cpus.len());
        assert!(samples.placements.iter().all(|p| p.verified));
    }

    #[test]
    fn a_stop_requested_before_the_curve_keeps_no_point_and_returns() {
        let cpus = affinity::allowed_cpus().unwrap();
        let stop = Stop::new();
        stop.request();
        let config = LoadedConfig {
            latency_cpu: cpus[0],
            load_cpus: vec![*cpus.last().unwrap()],
            node: 0,
            latency_bytes: 1 << 20,
            load_bytes_per_thread: 1 << 20,
            delays_ns: vec![0, 5000],
            pages: PageKind::Transparent,
            sampling: Sampling {
                samples: 2,
                sample_ns: 500_000,
            },
            stop,
        };
        let samples = measure(&config).unwrap();
        assert!(samples.points.is_empty());
    }
}
