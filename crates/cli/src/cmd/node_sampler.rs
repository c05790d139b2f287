//! One sample of the per-node memory signals for `probe-latency` and
//! `top` (read by `gather::memory_sample`, the reader memwatch and serve
//! use too), plus a background thread that samples on a schedule while a
//! probe runs and keeps the conditions analyze's one detector finds.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use numasleuth_analyze::memwatch::{conditions, Event, Sample};
use numasleuth_kernel::gather::{memory_sample, MemoryParts};
use numasleuth_kernel::{ReadError, Root};

/// Events kept at most over one run; later ones are counted, not kept.
pub const MAX_EVENTS: usize = 50_000;

/// The fewest files (zoneinfo, numastat, /proc/vmstat): read beside a
/// measurement.
pub fn sample(root: &Root, t_s: f64) -> Result<Sample, ReadError> {
    Ok(Sample::from_reading(
        t_s,
        &memory_sample(root, MemoryParts::SIGNALS).complete()?,
    ))
}

/// What the background sampler saw.
#[derive(Debug, Default)]
pub struct Record {
    pub samples: u64,
    pub events: Vec<Event>,
    pub events_dropped: u64,
    /// The first read error, after which sampling stopped.
    pub error: Option<String>,
}

pub struct Sampler {
    stop: Arc<AtomicBool>,
    handle: JoinHandle<Record>,
}

impl Sampler {
    /// Samples every `interval`, timing events from `start` (the probe's
    /// own time origin, so spikes and events share one clock).
    /// Fails, rather than panicking, when the system refuses a thread.
    pub fn start(root: Root, start: Instant, interval: Duration) -> std::io::Result<Sampler> {
        let stop = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&stop);
        let handle = std::thread::Builder::new()
            .name("memory signals".into())
            .spawn(move || run(&root, start, interval, &flag))?;
        Ok(Sampler { stop, handle })
    }

    pub fn finish(self) -> Record {
        self.stop.store(true, Ordering::Relaxed);
        self.handle.join().unwrap_or_else(|_| Record {
            error: Some("the memory-signal sampler thread failed".into()),
            ..Record::default()
        })
    }
}

fn run(root: &Root, start: Instant, interval: Duration, stop: &AtomicBool) -> Record {
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
    while !stop.load(Ordering::Relaxed) {
        // Short naps so `finish` returns promptly whatever the interval.
        let now = Instant::now();
        if now < due {
            std::thread::sleep((due - now).min(Duration::from_millis(20)));
            continue;
        }
        due += interval;
        let current = match sample(root, start.elapsed().as_secs_f64()) {
            Ok(s) => s,
            Err(e) => {
                record.error = Some(e.to_string());
                break;
            }
        };
        record.samples += 1;
        for event in conditions(&previous, &current) {
            if record.events.len() < MAX_EVENTS {
                record.events.push(event);
            } else {
                record.events_dropped += 1;
            }
        }
        previous = current;
    }
    record
}
