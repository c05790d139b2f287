//! The range of every value a request may carry, checked twice: by the
//! front-end while it parses what a person typed (clap's value parsers are
//! the functions of [`text`], so an out-of-range flag is one line, exit 2,
//! before anything runs), and by the command itself, so a request built
//! by any other front-end (`serve`, a library user) is refused with
//! [`OutOfRange`] rather than run.
//!
//! A value out of range must never reach the machine:
//! `Duration::from_secs_f64(1e23)` panics, `Instant + Duration` can
//! overflow, a busy-wait of `u64::MAX` ns never ends, and a million threads
//! or a petabyte buffer takes the machine down. Each limit is named here
//! once, quoted in `--help` and in the error messages.

pub mod text;

use std::fmt::Display;
use std::time::Duration;

use numasleuth_parse::typed::DurationRange;

/// `watch --duration`: long enough for a day-long incident, short enough
/// that `Instant` arithmetic and sample counts stay far from overflow.
pub const WATCH_MAX: Duration = Duration::from_secs(7 * 24 * 3600);
/// Below this a watch cannot attach to a thread before it ends.
pub const WATCH_MIN: Duration = Duration::from_millis(1);
/// `pmu --duration`: below this, attaching every event to every thread
/// takes longer than the count.
pub const PMU_MIN: Duration = Duration::from_millis(10);
/// `memwatch --duration`: the same week.
pub const MEMWATCH_MAX: Duration = WATCH_MAX;
/// `memwatch --interval`: sampling faster would start to cost what it
/// measures (zoneinfo and vmstat are read in full each time).
pub const INTERVAL_MIN: Duration = Duration::from_millis(100);
/// `memwatch --interval`: slower than this misses every event of interest.
pub const INTERVAL_MAX: Duration = Duration::from_secs(3600);
/// PID_MAX_LIMIT on 64-bit kernels (`/proc/sys/kernel/pid_max` cannot go
/// higher); PID 0 means "this process" to move_pages and perf, never a
/// target.
pub const PID_MAX: u32 = 4_194_304;
/// Worker threads per run (`mem --threads`, `lab --threads` entries), and
/// the threads of a process `pmu` counts: more than the largest machines
/// have CPUs, few enough to spawn (or open events on) safely.
pub const THREADS_MAX: u32 = 4096;
/// Entries in a `lab --thread-sweep` list or a `mem loaded --delays` list:
/// each entry is a full measurement.
pub const LIST_MAX: usize = 64;
/// `mem loaded --delays`: 1 ms per 4 KiB read is already a near-idle load
/// (4 MB/s a thread); longer spins only delay stopping.
pub const DELAY_MAX_NS: u64 = 1_000_000;
/// Characters in a typed CPU or node list: `0-8191` or `0-30:2` are a few
/// bytes, and even every id of a 4096-CPU machine written out one by one
/// fits; anything longer is not a list a person meant.
pub const ID_LIST_TEXT_MAX: usize = 32 * 1024;
/// `--sample-ms` (`mem`, `c2c`, `lab`): one sample's length.
pub const SAMPLE_MS_MIN: Duration = Duration::from_millis(1);
pub const SAMPLE_MS_MAX: Duration = Duration::from_secs(60);
/// `--samples` (`mem`, `c2c`, `lab`): samples kept per cell.
pub const SAMPLES_MAX: u32 = 1000;
/// `c2c --transfers`: round trips averaged into one sample.
pub const TRANSFERS_MAX: u32 = 10_000_000;
/// `hotlines`/`migrations`/`readers --duration`: samples and moves are
/// aggregated as they come, so an hour stays bounded; under 100 ms nothing
/// is seen.
pub const SAMPLE_MIN: Duration = Duration::from_millis(100);
pub const SAMPLE_MAX: Duration = Duration::from_secs(3600);
/// `hotpages --duration`: DAMON needs a few aggregations (100 ms each by
/// default) to split its regions down to the hot ones, so under a second
/// it has nothing to tell.
pub const DAMON_MIN: Duration = Duration::from_secs(1);
/// `migrations --interval`: 1 ms already costs a read of every thread's
/// `stat` a millisecond; 10 s misses nearly every move.
pub const POLL_MIN: Duration = Duration::from_millis(1);
pub const POLL_MAX: Duration = Duration::from_secs(10);
/// `hotlines --top`, `hotpages --top`: lines or regions ranked.
pub const TOP_MAX: u64 = 1000;
/// `hotlines --frequency`: 20 kHz is a sample every 50 µs of CPU time,
/// about 2% overhead; below 10 Hz a few seconds give nothing to rank.
pub const HZ_MIN: u64 = 10;
pub const HZ_MAX: u64 = 20_000;
/// The smallest buffer worth measuring: one base page.
pub const BUFFER_MIN_BYTES: usize = 4 << 10;
/// A fixed backstop for buffers (16 TiB, beyond any one node today); the
/// node's free memory is checked against the real size before allocating.
pub const BUFFER_MAX_BYTES: usize = 16 << 40;
/// Sizes in one sweep; each is a full measurement.
pub const SWEEP_MAX: usize = 64;

/// `probe-latency --rate`: one operation per second is the slowest useful
/// probe; a million a second is 1 µs apart, about what one thread can time
/// and issue.
pub const PROBE_RATE_MAX: u64 = 1_000_000;
/// `probe-latency --duration`: long enough for a day-long incident; the
/// timeline is bucketed, so memory does not grow with the duration.
pub const PROBE_DURATION_MIN: Duration = Duration::from_millis(10);
pub const PROBE_DURATION_MAX: Duration = Duration::from_secs(24 * 3600);
/// Node ids the kernel can have (MAX_NUMNODES is at most 1024 on Linux).
pub const NODE_MAX: u32 = 1023;
/// `runs -n`: a thousand runs of even a one-second benchmark is already a
/// quarter of an hour. (The fewest is the bimodality test's `MIN_RUNS`.)
pub const RUNS_MAX: u32 = 1000;
/// Entries in a `runs --start-cpus` list.
pub const START_CPUS_MAX: usize = 4096;
/// `runs --settle` and `--release-after`: a workload is placed within
/// seconds; an hour is far past any start-up.
pub const RUN_DELAY_MIN: Duration = Duration::from_millis(1);
pub const RUN_DELAY_MAX: Duration = Duration::from_secs(3600);
/// `runs --timeout`: one run of a week.
pub const RUN_TIMEOUT_MAX: Duration = Duration::from_secs(7 * 86_400);
/// `bisect --rounds`: fewer readings than 3 give no spread to speak of (a
/// step's noise estimate needs three); a hundred per step over dozens of
/// steps is already hours.
pub const ROUNDS_MIN: u32 = 3;
pub const ROUNDS_MAX: u32 = 100;
/// `bisect --settle`, after each move before reading.
pub const SETTLE_MIN: Duration = Duration::from_millis(1);
pub const SETTLE_MAX: Duration = Duration::from_secs(3600);
/// `bisect --metric-timeout`, one reading of the metric.
pub const METRIC_TIMEOUT_MIN: Duration = Duration::from_millis(10);
pub const METRIC_TIMEOUT_MAX: Duration = Duration::from_secs(3600);
/// `bisect --metric-cmd`: a shell command longer than this is not
/// something anyone types.
pub const METRIC_CMD_MAX_CHARS: usize = 4096;

/// A request carried a value outside its limit: a front-end that checks
/// nothing (or a library caller) asked for it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{what} is {value}, out of range: give {range}")]
pub struct OutOfRange {
    /// What the value is, as the request names it ("the watch duration").
    pub what: &'static str,
    pub value: String,
    /// The range, as a person reads it ("1 to 4096").
    pub range: String,
}

/// `duration` must be from `min` to `max`.
pub fn duration(what: &'static str, duration: Duration, (min, max): (Duration, Duration)) -> Result<(), OutOfRange> {
    if (min..=max).contains(&duration) {
        return Ok(());
    }
    Err(OutOfRange {
        what,
        value: format!("{:.3} s", duration.as_secs_f64()),
        range: DurationRange { min, max }.to_string(),
    })
}

/// `value` must be from `min` to `max`.
pub fn count<T: PartialOrd + Display>(what: &'static str, value: T, (min, max): (T, T)) -> Result<(), OutOfRange> {
    if min <= value && value <= max {
        return Ok(());
    }
    Err(OutOfRange {
        what,
        value: value.to_string(),
        range: format!("{min} to {max}"),
    })
}

/// A list of `len` entries, each a full measurement, must hold 1 to `max`.
pub fn list_len(what: &'static str, len: usize, max: usize) -> Result<(), OutOfRange> {
    count(what, len, (1, max)).map_err(|refused| OutOfRange {
        value: format!("{len} entries long"),
        range: format!("1 to {max} entries"),
        ..refused
    })
}

/// A sample of `sample_ms` and a count of `samples` (each optional, as
/// `mem`, `c2c` and `lab` take them) must be within their limits.
pub fn sampling(samples: Option<u32>, sample_ms: Option<u64>) -> Result<(), OutOfRange> {
    if let Some(samples) = samples {
        count("the samples kept", samples, (1, SAMPLES_MAX))?;
    }
    if let Some(ms) = sample_ms {
        let (min, max) = (SAMPLE_MS_MIN.as_millis() as u64, SAMPLE_MS_MAX.as_millis() as u64);
        count("the sample length in ms", ms, (min, max))?;
    }
    Ok(())
}

/// A buffer of `bytes` must be from [`BUFFER_MIN_BYTES`] to
/// [`BUFFER_MAX_BYTES`].
pub fn buffer(what: &'static str, bytes: usize) -> Result<(), OutOfRange> {
    count(what, bytes, (BUFFER_MIN_BYTES, BUFFER_MAX_BYTES)).map_err(|refused| OutOfRange {
        value: format!("{bytes} bytes"),
        range: "4K to 16T".to_string(),
        ..refused
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refusals_quote_the_value_and_the_range() {
        let refused = duration(
            "the watch duration",
            Duration::from_secs(1 << 40),
            (WATCH_MIN, WATCH_MAX),
        );
        assert_eq!(
            refused.unwrap_err().to_string(),
            "the watch duration is 1099511627776.000 s, out of range: give a duration from 1ms to 7 days (168h)"
        );
        assert_eq!(duration("d", WATCH_MAX, (WATCH_MIN, WATCH_MAX)), Ok(()));
        assert_eq!(
            count("a thread count", 0u32, (1, THREADS_MAX)).unwrap_err().to_string(),
            "a thread count is 0, out of range: give 1 to 4096"
        );
        assert_eq!(
            list_len("the delay list", 65, LIST_MAX).unwrap_err().to_string(),
            "the delay list is 65 entries long, out of range: give 1 to 64 entries"
        );
        assert!(list_len("the delay list", 0, LIST_MAX).is_err());
        assert_eq!(
            buffer("the buffer", 1).unwrap_err().to_string(),
            "the buffer is 1 bytes, out of range: give 4K to 16T"
        );
        assert_eq!(buffer("the buffer", BUFFER_MAX_BYTES), Ok(()));
    }
}
