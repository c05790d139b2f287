//! The range of every number a user can type, checked while parsing.
//!
//! A value out of range must be a clear error (exit 2) before anything
//! runs: `Duration::from_secs_f64(1e23)` panics, `Instant + Duration` can
//! overflow, a busy-wait of `u64::MAX` ns never ends, and a million threads
//! or a petabyte buffer takes the machine down. Each limit is named here
//! once, quoted in `--help` and in the error message.

use std::time::Duration;

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
/// Worker threads per run (`mem --threads`, `lab --threads` entries): more
/// than the largest machines have CPUs, few enough to spawn safely.
pub const THREADS_MAX: u32 = 4096;
/// Entries in a `lab --threads` list or a `mem loaded --delays` list: each
/// entry is a full measurement.
pub const LIST_MAX: usize = 64;
/// `mem loaded --delays`: 1 ms per 4 KiB read is already a near-idle load
/// (4 MB/s a thread); longer spins only delay stopping.
pub const DELAY_MAX_NS: u64 = 1_000_000;

/// Characters in a typed CPU or node list: `0-8191` or `0-30:2` are a few
/// bytes, and even every id of a 4096-CPU machine written out one by one
/// fits; anything longer is not a list a person meant.
pub const ID_LIST_TEXT_MAX: usize = 32 * 1024;

/// `-C, --cpus LIST`: numactl's `0-3,8`, or the strided `0-30:2` that
/// numasleuth prints, checked by the one list parser in the kernel crate.
pub fn cpu_list(text: &str) -> Result<numasleuth_kernel::IdList, String> {
    id_list(text, numasleuth_kernel::IdList::parse_input)
}

/// `-N, --nodes LIST`: as [`cpu_list`], with node ids.
pub fn node_list(text: &str) -> Result<numasleuth_kernel::IdList, String> {
    id_list(text, numasleuth_kernel::IdList::parse_nodes_input)
}

fn id_list(
    text: &str,
    parse: fn(&str) -> Result<numasleuth_kernel::IdList, numasleuth_kernel::ParseError>,
) -> Result<numasleuth_kernel::IdList, String> {
    if text.len() > ID_LIST_TEXT_MAX {
        return Err(format!(
            "the list is {} bytes long; at most {ID_LIST_TEXT_MAX} (write ranges like 0-63 or 0-62:2)",
            text.len()
        ));
    }
    let list = parse(text).map_err(|e| e.to_string())?;
    if list.is_empty() {
        return Err("the list is empty; give ids like 0-3,8 or 0-30:2".into());
    }
    Ok(list)
}

/// `500ms`, `1s`, `1.5s`, `2m`, `1h`: what a person types for a duration,
/// between `min` and `max`. The unit is required: a bare `500` meant
/// milliseconds to some users and seconds to others. The range is checked
/// on the number before any `Duration` is built, so no input can overflow
/// or panic.
pub fn duration_in(text: &str, min: Duration, max: Duration) -> Result<Duration, String> {
    let text = text.trim();
    let range = || format!("a duration from {} to {}", show(min), show(max));
    let Some((number, seconds_per_unit)) = [("ms", 1e-3), ("s", 1.0), ("m", 60.0), ("h", 3600.0)]
        .into_iter()
        .find_map(|(unit, scale)| Some((text.strip_suffix(unit)?, scale)))
    else {
        return Err(match text.parse::<f64>() {
            Ok(_) => format!(
                "`{text}` has no unit: write {text}ms or {text}s (units: ms, s, m, h); give {}",
                range()
            ),
            Err(_) => format!("`{text}` is not a duration like 500ms, 1s, 2m or 1h; give {}", range()),
        });
    };
    let value: f64 = number
        .trim()
        .parse()
        .map_err(|_| format!("`{text}` is not a duration like 500ms, 1s, 2m or 1h; give {}", range()))?;
    let seconds = value * seconds_per_unit;
    if !seconds.is_finite() || seconds < min.as_secs_f64() || seconds > max.as_secs_f64() {
        return Err(format!("`{text}` is out of range: give {}", range()));
    }
    Ok(Duration::from_secs_f64(seconds))
}

/// `--sample-ms`: milliseconds, as its name says (`40`), or any duration
/// with its unit (`40ms`, `0.5s`), from 1 ms to 60 s.
pub fn sample_ms(text: &str) -> Result<u64, String> {
    let trimmed = text.trim();
    if !trimmed.is_empty() && trimmed.bytes().all(|b| b.is_ascii_digit()) {
        return whole_in(trimmed, 1, 60_000, "a sample length in milliseconds");
    }
    duration_in(trimmed, Duration::from_millis(1), Duration::from_secs(60)).map(|d| d.as_millis() as u64)
}

/// How a limit reads in a message: `100ms`, `1h`, `7 days (168h)`.
fn show(d: Duration) -> String {
    let ms = d.as_millis();
    match ms {
        ms if ms < 1000 => format!("{ms}ms"),
        86_400_000 => "1 day (24h)".to_string(),
        ms if ms % 86_400_000 == 0 => format!("{} days ({}h)", ms / 86_400_000, ms / 3_600_000),
        ms if ms % 3_600_000 == 0 => format!("{}h", ms / 3_600_000),
        ms if ms % 1000 == 0 => format!("{}s", ms / 1000),
        ms => format!("{ms}ms"),
    }
}

pub fn watch_duration(text: &str) -> Result<Duration, String> {
    duration_in(text, WATCH_MIN, WATCH_MAX)
}

pub fn pmu_duration(text: &str) -> Result<Duration, String> {
    duration_in(text, PMU_MIN, WATCH_MAX)
}

pub fn memwatch_duration(text: &str) -> Result<Duration, String> {
    duration_in(text, INTERVAL_MIN, MEMWATCH_MAX)
}

pub fn memwatch_interval(text: &str) -> Result<Duration, String> {
    duration_in(text, INTERVAL_MIN, INTERVAL_MAX)
}

/// A whole number from `min` to `max`; anything else (signs, fractions,
/// hex, overflow) is refused with the range.
pub fn whole_in(text: &str, min: u64, max: u64, what: &str) -> Result<u64, String> {
    let trimmed = text.trim();
    let refused = || format!("`{trimmed}` is not {what} from {min} to {max}");
    if trimmed.is_empty() || !trimmed.bytes().all(|b| b.is_ascii_digit()) {
        return Err(refused());
    }
    let value: u64 = trimmed.parse().map_err(|_| refused())?;
    if !(min..=max).contains(&value) {
        return Err(refused());
    }
    Ok(value)
}

pub fn pid(text: &str) -> Result<u32, String> {
    whole_in(text, 1, u64::from(PID_MAX), "a process id").map(|v| v as u32)
}

pub fn threads(text: &str) -> Result<u32, String> {
    whole_in(text, 1, u64::from(THREADS_MAX), "a thread count").map(|v| v as u32)
}

/// `mem loaded --delays`: a comma list of busy-wait times in ns.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DelaysNs(pub Vec<u64>);

pub fn delays_ns(text: &str) -> Result<DelaysNs, String> {
    let delays = text
        .split(',')
        .map(|d| whole_in(d, 0, DELAY_MAX_NS, "a delay in ns"))
        .collect::<Result<Vec<_>, _>>()?;
    if delays.len() > LIST_MAX {
        return Err(format!("{} delays given; at most {LIST_MAX}", delays.len()));
    }
    Ok(DelaysNs(delays))
}

/// `hotlines`/`migrations --duration`: samples and moves are aggregated
/// as they come, so an hour stays bounded; under 100 ms nothing is seen.
pub const SAMPLE_MIN: Duration = Duration::from_millis(100);
pub const SAMPLE_MAX: Duration = Duration::from_secs(3600);

pub fn sample_duration(text: &str) -> Result<Duration, String> {
    duration_in(text, SAMPLE_MIN, SAMPLE_MAX)
}

/// `hotpages --duration`: DAMON needs a few aggregations (100 ms each by
/// default) to split its regions down to the hot ones, so under a second
/// it has nothing to tell.
pub fn damon_duration(text: &str) -> Result<Duration, String> {
    duration_in(text, Duration::from_secs(1), SAMPLE_MAX)
}

/// `migrations --interval`: 1 ms already costs a read of every thread's
/// `stat` a millisecond; 10 s misses nearly every move.
pub fn poll_interval(text: &str) -> Result<Duration, String> {
    duration_in(text, Duration::from_millis(1), Duration::from_secs(10))
}

/// `hotlines --top`.
pub fn top_lines(text: &str) -> Result<usize, String> {
    whole_in(text, 1, 1000, "a line count").map(|n| n as usize)
}

/// `hotlines --frequency`: 20 kHz is a sample every 50 µs of CPU time,
/// about 2% overhead; below 10 Hz a few seconds give nothing to rank.
pub fn sample_hz(text: &str) -> Result<u64, String> {
    whole_in(text, 10, 20_000, "a sampling rate in Hz")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_in_every_unit() {
        assert_eq!(watch_duration("500ms"), Ok(Duration::from_millis(500)));
        assert_eq!(watch_duration("1.5s"), Ok(Duration::from_millis(1500)));
        assert!(watch_duration("2")
            .unwrap_err()
            .contains("`2` has no unit: write 2ms or 2s"));
        assert!(watch_duration("500").unwrap_err().contains("has no unit"));
        assert_eq!(watch_duration("2m"), Ok(Duration::from_secs(120)));
        assert_eq!(watch_duration("168h"), Ok(WATCH_MAX));
        assert_eq!(memwatch_interval("1h"), Ok(INTERVAL_MAX));
    }

    #[test]
    fn hostile_durations_are_refused_not_panics() {
        for text in [
            "1e23s",
            "1e23",
            "18446744073709551616s",
            "9223372036854775807s",
            "nan",
            "NaNs",
            "inf",
            "infs",
            "-inf",
            "-1s",
            "0s",
            "0",
            "169h",
            "1e-300s",
            "",
            "s",
            "1d",
            "1 s s",
            "0x10s",
        ] {
            let error = watch_duration(text).unwrap_err();
            assert!(error.contains("from 1ms to 7 days (168h)"), "{text}: {error}");
        }
        assert!(memwatch_interval("99ms").unwrap_err().contains("from 100ms to 1h"));
        assert!(memwatch_interval("61m").is_err());
        assert!(pmu_duration("9ms").unwrap_err().contains("from 10ms to 7 days (168h)"));
        assert_eq!(pmu_duration("200ms"), Ok(Duration::from_millis(200)));
    }

    #[test]
    fn sample_ms_takes_milliseconds_or_a_duration() {
        assert_eq!(sample_ms("40"), Ok(40));
        assert_eq!(sample_ms("40ms"), Ok(40));
        assert_eq!(sample_ms("0.5s"), Ok(500));
        for bad in ["0", "60001", "61s", "0.1ms", "-1", "nan", "", "40us"] {
            assert!(sample_ms(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn whole_numbers_with_limits() {
        assert_eq!(pid("1"), Ok(1));
        assert_eq!(pid("4194304"), Ok(PID_MAX));
        for text in ["0", "4194305", "-1", "+1", "1.0", "0x10", "", "18446744073709551616"] {
            assert!(pid(text).unwrap_err().contains("from 1 to 4194304"), "{text}");
        }
        assert_eq!(threads("4096"), Ok(4096));
        assert!(threads("4097").is_err());
    }

    #[test]
    fn typed_lists_take_numactl_and_strided_forms() {
        assert_eq!(cpu_list("0-6:2,9").unwrap().ids(), &[0, 2, 4, 6, 9]);
        assert_eq!(node_list("0-3,8").unwrap().ids(), &[0, 1, 2, 3, 8]);
        for bad in ["", " ", "0-30:0", "3-1", "x", "1,,2", "0-1024:2"] {
            let error = node_list(bad).unwrap_err();
            assert!(!error.contains('\n'), "{bad}: {error}");
        }
        let long = vec!["1"; 20_000].join(",");
        assert!(cpu_list(&long).unwrap_err().contains("at most 32768"));
    }

    #[test]
    fn delay_lists() {
        assert_eq!(delays_ns("0,2000"), Ok(DelaysNs(vec![0, 2000])));
        assert!(delays_ns("1000001").unwrap_err().contains("from 0 to 1000000"));
        assert!(delays_ns("18446744073709551615").is_err());
        assert!(delays_ns(&vec!["1"; 65].join(",")).unwrap_err().contains("at most 64"));
        assert!(delays_ns("1,,2").is_err());
    }
}
