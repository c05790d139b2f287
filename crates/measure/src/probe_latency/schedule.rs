//! The probe's schedule: operation i is *intended* to start at i/rate
//! seconds, whatever happened to operation i-1. Each latency is recorded
//! twice: from the intended start (corrected for coordinated omission: a
//! stall delays every operation queued behind it, and those delays count)
//! and from the actual start (what a naive recorder reports, where a
//! 300 ms stall is one slow sample among thousands).
//!
//! Memory is bounded: two HDR histograms and a fixed number of timeline
//! buckets, however long the run.

use std::io;

use std::time::{Duration, Instant};

use hdrhistogram::Histogram;
use numasleuth_model::latency::Bucket;
use numasleuth_model::stop::Stop;

use super::ops::Operation;

/// Latencies above a week are recorded as a week (the run is at most a
/// day long, so only a stopped-and-forgotten probe gets there).
const HIGHEST_NS: u64 = 7 * 24 * 3600 * 1_000_000_000;
/// Timeline slices at most, and their least width.
const MAX_BUCKETS: u64 = 1000;
const MIN_BUCKET_NS: u64 = 10_000_000;
/// Sleep until this close to an operation's intended start, then spin:
/// timer slack would otherwise add tens of µs to every corrected sample.
const SPIN_NS: u64 = 200_000;

pub struct Recorded {
    pub corrected: Histogram<u64>,
    pub uncorrected: Histogram<u64>,
    pub buckets: Vec<Bucket>,
    pub bucket_ns: u64,
    /// Operations the schedule asked for but that were never issued,
    /// because the run fell too far behind or was interrupted.
    pub not_issued: u64,
    pub interrupted: bool,
    pub wall: Duration,
}

/// Issues `rate_per_sec × duration` operations on schedule. A run that
/// falls behind catches up back to back, but stops issuing once it is
/// `grace` past the schedule's end (an operation slower than the rate would
/// otherwise stretch a 60 s probe without bound).
pub fn drive(
    op: &mut dyn Operation,
    rate_per_sec: u64,
    duration: Duration,
    start: Instant,
    stop: &Stop,
) -> io::Result<Recorded> {
    let duration_ns = u64::try_from(duration.as_nanos()).unwrap_or(u64::MAX);
    let total = (u128::from(duration_ns) * u128::from(rate_per_sec) / 1_000_000_000).max(1) as u64;
    let grace_ns = (duration_ns / 10).max(1_000_000_000);
    let deadline_ns = duration_ns.saturating_add(grace_ns);
    let bucket_ns = (duration_ns / MAX_BUCKETS).max(MIN_BUCKET_NS);
    let histogram = || Histogram::<u64>::new_with_bounds(1, HIGHEST_NS, 3).map_err(io::Error::other);
    let mut recorded = Recorded {
        corrected: histogram()?,
        uncorrected: histogram()?,
        buckets: vec![Bucket::default(); (duration_ns / bucket_ns + 1) as usize],
        bucket_ns,
        not_issued: 0,
        interrupted: false,
        wall: Duration::ZERO,
    };
    for (i, bucket) in recorded.buckets.iter_mut().enumerate() {
        bucket.start_s = (i as u64 * bucket_ns) as f64 / 1e9;
    }
    let elapsed_ns = || u64::try_from(start.elapsed().as_nanos()).unwrap_or(u64::MAX);
    for i in 0..total {
        let intended_ns = (u128::from(i) * 1_000_000_000 / u128::from(rate_per_sec)) as u64;
        wait_until(intended_ns, &elapsed_ns);
        let began_ns = elapsed_ns();
        if began_ns > deadline_ns || stop.requested() {
            recorded.not_issued = total - i;
            recorded.interrupted = stop.requested();
            break;
        }
        op.once()?;
        let done_ns = elapsed_ns();
        let corrected_ns = done_ns.saturating_sub(intended_ns).max(1);
        let uncorrected_ns = done_ns.saturating_sub(began_ns).max(1);
        recorded.corrected.saturating_record(corrected_ns);
        recorded.uncorrected.saturating_record(uncorrected_ns);
        let index = ((intended_ns / bucket_ns) as usize).min(recorded.buckets.len() - 1);
        let bucket = &mut recorded.buckets[index];
        bucket.count += 1;
        bucket.max_uncorrected_ns = bucket.max_uncorrected_ns.max(uncorrected_ns);
        if corrected_ns > bucket.max_corrected_ns {
            bucket.max_corrected_ns = corrected_ns;
            bucket.max_at_s = intended_ns as f64 / 1e9;
        }
    }
    recorded.wall = start.elapsed();
    Ok(recorded)
}

fn wait_until(intended_ns: u64, elapsed_ns: &dyn Fn() -> u64) {
    let now_ns = elapsed_ns();
    if intended_ns > now_ns + SPIN_NS {
        std::thread::sleep(Duration::from_nanos(intended_ns - now_ns - SPIN_NS));
    }
    while elapsed_ns() < intended_ns {
        std::hint::spin_loop();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Stalls once, as a stopped process would, and is instant otherwise.
    struct StallOnce {
        calls: u64,
        at: u64,
        stall: Duration,
    }

    impl Operation for StallOnce {
        fn once(&mut self) -> io::Result<()> {
            self.calls += 1;
            if self.calls == self.at {
                std::thread::sleep(self.stall);
            }
            Ok(())
        }
    }

    #[test]
    fn a_stall_shows_in_the_corrected_histogram_only() {
        let mut op = StallOnce {
            calls: 0,
            at: 100,
            stall: Duration::from_millis(200),
        };
        let stop = Stop::new();
        let r = drive(&mut op, 1000, Duration::from_millis(500), Instant::now(), &stop).unwrap();
        assert_eq!(op.calls, 500);
        assert_eq!((r.corrected.len(), r.uncorrected.len(), r.not_issued), (500, 500, 0));
        // ~200 operations were queued behind the stall: at least 1% of them
        // waited over 150 ms from their intended start, whatever the load.
        assert!(
            r.corrected.value_at_quantile(0.99) >= 150_000_000,
            "{}",
            r.corrected.value_at_quantile(0.99)
        );
        // Only one operation itself took long.
        assert!(r.uncorrected.max() >= 200_000_000);
        assert!(r.uncorrected.count_between(150_000_000, HIGHEST_NS) <= 3);
        assert_eq!(r.buckets.iter().map(|b| b.count).sum::<u64>(), 500);
    }

    #[test]
    fn a_stop_request_ends_the_run_and_counts_what_was_not_issued() {
        let mut op = StallOnce {
            calls: 0,
            at: 0,
            stall: Duration::ZERO,
        };
        let stop = Stop::new();
        stop.request();
        let r = drive(&mut op, 10, Duration::from_secs(3600), Instant::now(), &stop).unwrap();
        assert_eq!((op.calls, r.not_issued, r.interrupted), (0, 36_000, true));
        assert!(r.buckets.len() <= MAX_BUCKETS as usize + 1);
    }
}
