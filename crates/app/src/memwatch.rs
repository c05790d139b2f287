//! `memwatch`: /proc/zoneinfo, /proc/vmstat and each node's numastat
//! sampled on a fixed schedule (`probe::memory_signals::follow`), each
//! sample's rates and watermark events derived as it comes
//! (`analyze::memwatch`), and handed to the front-end, which prints it at
//! once. It reads nothing that takes allocator locks (no /proc/slabinfo),
//! bounds its sample count, and measures its own cost.

use std::time::{Duration, Instant};

use numasleuth_analyze::memwatch::{cost_of, machine_row, rows, Cost, Event, EventTracker, MachineRow, Row, Sample};
use numasleuth_kernel::{pages, ReadError, Root};
use numasleuth_model::stop::{RunSpan, Stop};
use numasleuth_probe::memory_signals::{follow, watch_sample, Schedule, ScheduleOutOfRange};
use numasleuth_report::memwatch_text::InstantReport;

use crate::limits::{self, OutOfRange, INTERVAL_MAX, INTERVAL_MIN, MEMWATCH_MAX};

/// Caps memory: an hour at 100 ms is 36,000 samples.
pub const MAX_SAMPLES: u128 = 100_000;

/// What `memwatch` is asked, with no clap in it.
#[derive(Debug, Clone, Copy)]
pub struct MemwatchRequest {
    pub interval: Duration,
    pub duration: Duration,
}

/// What an observer's own failure (a closed stdout, a file) becomes.
pub type ObserverError = Box<dyn std::error::Error + Send + Sync>;

#[derive(Debug, thiserror::Error)]
pub enum MemwatchError {
    #[error("--duration {duration_ms} ms is shorter than --interval {interval_ms} ms")]
    DurationBelowInterval { duration_ms: u128, interval_ms: u128 },
    #[error("{count} samples requested; at most {MAX_SAMPLES} (raise --interval or lower --duration)")]
    TooManySamples { count: u128 },
    #[error("cannot take the first memwatch sample")]
    FirstSample(#[source] ReadError),
    #[error("cannot read the snapshot's memory state")]
    Snapshot(#[source] ReadError),
    #[error(transparent)]
    OutOfRange(#[from] OutOfRange),
    #[error(transparent)]
    Read(#[from] ReadError),
    #[error(transparent)]
    Schedule(#[from] ScheduleOutOfRange),
    #[error(transparent)]
    Observer(ObserverError),
}

/// One sample after the first, with what it says against the one before.
pub struct Step<'a> {
    pub rows: Vec<Row>,
    pub machine: MachineRow,
    pub events: Vec<Event>,
    pub sample: &'a Sample,
}

/// Where each sample goes as it is taken: the front-end prints it then,
/// not at the end. An error ends the run.
pub trait MemwatchObserver {
    /// The first sample, taken before any wait: no rates yet.
    fn first(&mut self, sample: &Sample, request: &MemwatchRequest, base_page_bytes: u64) -> Result<(), ObserverError>;
    fn step(&mut self, step: &Step<'_>, base_page_bytes: u64) -> Result<(), ObserverError>;
}

/// What watching took: the samples after the first, their cost, and how
/// the run ended.
pub struct Watched {
    pub samples: usize,
    pub cost: Option<Cost>,
    pub span: RunSpan,
}

/// The number of samples after the first that `request` asks for,
/// refused when its interval or duration is out of range, or when there is
/// no sample or more than [`MAX_SAMPLES`].
fn sample_count(request: &MemwatchRequest) -> Result<u128, MemwatchError> {
    limits::duration("the memwatch interval", request.interval, (INTERVAL_MIN, INTERVAL_MAX))?;
    limits::duration("the memwatch duration", request.duration, (INTERVAL_MIN, MEMWATCH_MAX))?;
    let interval_ns = request.interval.as_nanos();
    let count = request.duration.as_nanos().checked_div(interval_ns).unwrap_or(0);
    if count == 0 {
        return Err(MemwatchError::DurationBelowInterval {
            duration_ms: request.duration.as_millis(),
            interval_ms: request.interval.as_millis(),
        });
    }
    if count > MAX_SAMPLES {
        return Err(MemwatchError::TooManySamples { count });
    }
    Ok(count)
}

/// Watches the live machine on `request`'s schedule until it ends or
/// `stop` is requested, handing every sample to `observer` as it comes.
pub fn run(
    root: &Root,
    request: &MemwatchRequest,
    stop: &Stop,
    observer: &mut dyn MemwatchObserver,
) -> Result<Watched, MemwatchError> {
    let count = sample_count(request)?;
    let start = Instant::now();
    let first = watch_sample(root, 0.0).map_err(MemwatchError::FirstSample)?;
    let page_bytes = pages::page_size_bytes();
    observer
        .first(&first, request, page_bytes)
        .map_err(MemwatchError::Observer)?;
    let mut tracker = EventTracker::new(page_bytes);
    let schedule = Schedule {
        start,
        interval: request.interval,
        count,
    };
    let cost_us = follow(root, first, schedule, stop, |previous, current| {
        let step = Step {
            rows: rows(previous, current),
            machine: machine_row(previous, current),
            events: tracker.events(previous, current),
            sample: current,
        };
        observer.step(&step, page_bytes).map_err(MemwatchError::Observer)
    })?;
    Ok(Watched {
        samples: cost_us.len(),
        cost: cost_of(&cost_us, request.interval.as_secs_f64() * 1e6),
        span: RunSpan::timed(start, Some(request.duration), stop),
    })
}

/// A snapshot holds one moment: that moment, without rates, and nothing
/// waited for.
pub fn instant(root: &Root) -> Result<InstantReport, MemwatchError> {
    Ok(InstantReport {
        sample: watch_sample(root, 0.0).map_err(MemwatchError::Snapshot)?,
        page_bytes: pages::base_page_bytes(root),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(interval_ms: u64, duration_ms: u64) -> MemwatchRequest {
        MemwatchRequest {
            interval: Duration::from_millis(interval_ms),
            duration: Duration::from_millis(duration_ms),
        }
    }

    #[test]
    fn a_duration_shorter_than_the_interval_is_refused() {
        let error = sample_count(&request(1000, 999)).unwrap_err();
        assert_eq!(
            error.to_string(),
            "--duration 999 ms is shorter than --interval 1000 ms"
        );
    }

    #[test]
    fn an_interval_or_duration_out_of_range_is_refused() {
        assert!(matches!(
            sample_count(&request(0, 1000)),
            Err(MemwatchError::OutOfRange(_))
        ));
        let week_ms = MEMWATCH_MAX.as_millis() as u64;
        assert!(matches!(
            sample_count(&request(3600 * 1000 + 1, week_ms)),
            Err(MemwatchError::OutOfRange(_))
        ));
        let error = sample_count(&request(1000, week_ms + 1)).unwrap_err();
        assert!(
            error
                .to_string()
                .starts_with("the memwatch duration is 604800.001 s, out of range"),
            "{error}"
        );
    }

    #[test]
    fn more_samples_than_the_cap_are_refused() {
        assert_eq!(sample_count(&request(100, 100 * 100_000)).unwrap(), 100_000);
        let error = sample_count(&request(100, 100 * 100_001)).unwrap_err();
        assert!(matches!(error, MemwatchError::TooManySamples { count: 100_001 }));
        assert_eq!(sample_count(&request(INTERVAL_MIN.as_millis() as u64, 100)).unwrap(), 1);
    }
}
