//! The periodic sampler of the per-node memory signals: `memwatch`'s
//! schedule ([`follow`]) and `probe-latency`'s background thread
//! ([`Sampler`]). Both read through the one reader,
//! `kernel::gather::memory_sample` into model's `Sample`; the events are
//! found by the detector the caller hands the thread (analyze's one, so
//! this crate decides nothing). They return raw samples, what the detector
//! found, and timings, and never print.
//!
//! Why here: sampling /proc on a schedule is watching the machine, which
//! is this crate's room; the CLI only says how often and what to do with
//! each sample.

use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use numasleuth_kernel::gather::{memory_sample, MemoryParts};
use numasleuth_kernel::{ReadError, Root};
use numasleuth_model::memory_signals::Sample;
use numasleuth_model::stop::Stop;

/// Events kept at most over one run; later ones are counted, not kept.
pub const MAX_EVENTS: usize = 50_000;

/// One sample of `parts`, timed `t_s` into the run, or the first part that
/// could not be read (a watching command stops there).
pub fn sample_parts(root: &Root, parts: MemoryParts, t_s: f64) -> Result<Sample, ReadError> {
    Ok(Sample::from_reading(t_s, &memory_sample(root, parts).complete()?))
}

/// The fewest files (zoneinfo, numastat, /proc/vmstat), for `top` and
/// `probe-latency`: read beside a measurement, so kept cheap.
pub fn sample(root: &Root, t_s: f64) -> Result<Sample, ReadError> {
    sample_parts(root, MemoryParts::SIGNALS, t_s)
}

/// `memwatch`'s sample: zoneinfo, each node's numastat and vmstat,
/// /proc/vmstat and the zone-reclaim mode. Only cheap files; never
/// /proc/slabinfo.
pub fn watch_sample(root: &Root, t_s: f64) -> Result<Sample, ReadError> {
    sample_parts(root, MemoryParts::WATCH, t_s)
}

/// When [`follow`] samples: `count` more samples after the first, the
/// i-th due `i × interval` after `start` (so a slow sample does not push
/// the later ones back).
#[derive(Debug, Clone, Copy)]
pub struct Schedule {
    pub start: Instant,
    pub interval: Duration,
    pub count: u128,
}

/// The schedule's times do not fit an `Instant` (never with the CLI's
/// bounds, which keep it to 100,000 samples over at most 7 days).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ScheduleOutOfRange;

impl std::fmt::Display for ScheduleOutOfRange {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("memwatch schedule out of range")
    }
}

impl std::error::Error for ScheduleOutOfRange {}

/// Takes `memwatch`'s samples on `schedule` after `first`, handing each
/// (previous, current) pair to `each` as it comes, until the schedule ends
/// or `stop` is requested. Returns what each sample cost to read, in µs,
/// so the caller can say what watching cost (analyze's `cost_of`).
///
/// Why a callback: memwatch prints as it samples, and printing stays in
/// the CLI. A read error or an error of `each` ends the run.
pub fn follow<E>(
    root: &Root,
    first: Sample,
    schedule: Schedule,
    stop: &Stop,
    mut each: impl FnMut(&Sample, &Sample) -> Result<(), E>,
) -> Result<Vec<f64>, E>
where
    E: From<ReadError> + From<ScheduleOutOfRange>,
{
    let mut previous = first;
    let mut cost_us = Vec::new();
    for i in 1..=schedule.count {
        // Bounded by the caller's limits, so neither the product nor the
        // sum can overflow; checked all the same.
        let due = u32::try_from(i)
            .ok()
            .and_then(|i| schedule.interval.checked_mul(i))
            .and_then(|offset| schedule.start.checked_add(offset))
            .ok_or(ScheduleOutOfRange)?;
        if stop.sleep_until(due) {
            break;
        }
        let began = Instant::now();
        let current = watch_sample(root, schedule.start.elapsed().as_secs_f64())?;
        cost_us.push(began.elapsed().as_secs_f64() * 1e6);
        each(&previous, &current)?;
        previous = current;
    }
    Ok(cost_us)
}

/// What the background sampler saw: `E` is what the caller's detector
/// finds between two samples.
#[derive(Debug)]
pub struct Record<E> {
    pub samples: u64,
    pub events: Vec<E>,
    pub events_dropped: u64,
    /// The first read error, after which sampling stopped.
    pub error: Option<String>,
}

impl<E> Default for Record<E> {
    fn default() -> Self {
        Record {
            samples: 0,
            events: Vec::new(),
            events_dropped: 0,
            error: None,
        }
    }
}

/// Finds the events between a sample and the next (analyze's
/// `memwatch::conditions`).
pub type Detector<E> = fn(&Sample, &Sample) -> Vec<E>;

/// `probe-latency`'s memory-signal sampler: a thread that samples beside
/// the probe so latency spikes can be set against the memory events of
/// the same moments.
pub struct Sampler<E> {
    /// The thread's own token: `finish` ends this sampler, not the run.
    stop: Stop,
    handle: JoinHandle<Record<E>>,
}

impl<E: Send + 'static> Sampler<E> {
    /// Samples every `interval`, timing events from `start` (the probe's
    /// own time origin, so spikes and events share one clock), and keeps
    /// what `detect` finds in each pair of samples: the events, not every
    /// sample, so memory stays bounded however long the run.
    /// Fails, rather than panicking, when the system refuses a thread.
    pub fn start(root: Root, start: Instant, interval: Duration, detect: Detector<E>) -> std::io::Result<Self> {
        let stop = Stop::new();
        let token = stop.clone();
        let handle = std::thread::Builder::new()
            .name("memory signals".into())
            .spawn(move || run(&root, start, interval, &token, detect))?;
        Ok(Sampler { stop, handle })
    }

    /// Stops the thread and returns what it saw.
    pub fn finish(self) -> Record<E> {
        self.stop.request();
        self.handle.join().unwrap_or_else(|_| Record {
            error: Some("the memory-signal sampler thread failed".into()),
            ..Record::default()
        })
    }
}

fn run<E>(root: &Root, start: Instant, interval: Duration, stop: &Stop, detect: Detector<E>) -> Record<E> {
    let mut record = Record::default();
    let mut previous = match sample(root, start.elapsed().as_secs_f64()) {
        Ok(s) => s,
        Err(e) => {
            record.error = Some(e.to_string());
            return record;
        }
    };
    record.samples = 1;
    let mut due = Instant::now() + interval;
    // The token's sleep looks at it often, so `finish` returns promptly
    // whatever the interval.
    while !stop.sleep_until(due) {
        due += interval;
        let current = match sample(root, start.elapsed().as_secs_f64()) {
            Ok(s) => s,
            Err(e) => {
                record.error = Some(e.to_string());
                break;
            }
        };
        record.samples += 1;
        keep(&mut record, detect(&previous, &current));
        previous = current;
    }
    record
}

/// Keeps events up to [`MAX_EVENTS`] and counts the rest.
fn keep<E>(record: &mut Record<E>, events: Vec<E>) {
    for event in events {
        if record.events.len() < MAX_EVENTS {
            record.events.push(event);
        } else {
            record.events_dropped += 1;
        }
    }
}

#[cfg(test)]
#[path = "memory_signals_tests.rs"]
mod tests;
