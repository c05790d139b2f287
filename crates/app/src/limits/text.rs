//! The limits of [`super`] bound to `parse::typed`'s text formats: the
//! value parsers a front-end hands what a person typed (cli's clap
//! `value_parser`s are these functions), each refusing in one line that
//! quotes the range.

use std::time::Duration;

use numasleuth_parse::typed::{self, DelaysNs, Sizes, TypedError};
use numasleuth_parse::IdList;

use super::*;

/// `-C, --cpus LIST`: numactl's `0-3,8`, or the strided `0-30:2` that
/// numasleuth prints.
pub fn cpu_list(text: &str) -> Result<IdList, TypedError> {
    typed::id_list(text, IdList::parse_input, ID_LIST_TEXT_MAX)
}

/// `-N, --nodes LIST`: as [`cpu_list`], with node ids.
pub fn node_list(text: &str) -> Result<IdList, TypedError> {
    typed::id_list(text, IdList::parse_nodes_input, ID_LIST_TEXT_MAX)
}

/// `--sample-ms`: milliseconds, as its name says (`40`), or any duration
/// with its unit (`40ms`, `0.5s`), from 1 ms to 60 s.
pub fn sample_ms(text: &str) -> Result<u64, TypedError> {
    typed::millis_in(text, SAMPLE_MS_MIN, SAMPLE_MS_MAX, "a sample length in milliseconds")
}

pub fn watch_duration(text: &str) -> Result<Duration, TypedError> {
    typed::duration_in(text, WATCH_MIN, WATCH_MAX)
}

pub fn pmu_duration(text: &str) -> Result<Duration, TypedError> {
    typed::duration_in(text, PMU_MIN, WATCH_MAX)
}

pub fn memwatch_duration(text: &str) -> Result<Duration, TypedError> {
    typed::duration_in(text, INTERVAL_MIN, MEMWATCH_MAX)
}

pub fn memwatch_interval(text: &str) -> Result<Duration, TypedError> {
    typed::duration_in(text, INTERVAL_MIN, INTERVAL_MAX)
}

/// `hotlines`/`migrations`/`readers --duration`.
pub fn sample_duration(text: &str) -> Result<Duration, TypedError> {
    typed::duration_in(text, SAMPLE_MIN, SAMPLE_MAX)
}

/// `hotpages --duration`.
pub fn damon_duration(text: &str) -> Result<Duration, TypedError> {
    typed::duration_in(text, DAMON_MIN, SAMPLE_MAX)
}

/// `migrations --interval`.
pub fn poll_interval(text: &str) -> Result<Duration, TypedError> {
    typed::duration_in(text, POLL_MIN, POLL_MAX)
}

pub fn pid(text: &str) -> Result<u32, TypedError> {
    typed::whole_in(text, 1, u64::from(PID_MAX), "a process id").map(|v| v as u32)
}

pub fn threads(text: &str) -> Result<u32, TypedError> {
    typed::whole_in(text, 1, u64::from(THREADS_MAX), "a thread count").map(|v| v as u32)
}

/// `mem loaded --delays`: a comma list of busy-wait times in ns.
pub fn delays_ns(text: &str) -> Result<DelaysNs, TypedError> {
    typed::delays_ns(text, DELAY_MAX_NS, LIST_MAX)
}

/// `hotlines --top`, `hotpages --top`.
pub fn top_lines(text: &str) -> Result<usize, TypedError> {
    typed::whole_in(text, 1, TOP_MAX, "a line count").map(|n| n as usize)
}

/// `hotlines --frequency`.
pub fn sample_hz(text: &str) -> Result<u64, TypedError> {
    typed::whole_in(text, HZ_MIN, HZ_MAX, "a sampling rate in Hz")
}

/// A measurement buffer: a size from 4K to 16T.
pub fn buffer_size(text: &str) -> Result<usize, TypedError> {
    typed::buffer_bytes(text, BUFFER_MIN_BYTES, BUFFER_MAX_BYTES)
}

/// A sweep of buffer sizes, each 4K to 16T, at most 64 of them.
pub fn size_sweep(text: &str) -> Result<Sizes, TypedError> {
    typed::size_sweep(text, BUFFER_MIN_BYTES, BUFFER_MAX_BYTES, SWEEP_MAX)
}

/// `probe-latency --rate`: `1000/s` or `1000`, operations per second.
pub fn rate_per_sec(text: &str) -> Result<u64, TypedError> {
    let number = text.trim().strip_suffix("/s").unwrap_or(text.trim());
    typed::whole_in(number, 1, PROBE_RATE_MAX, "a rate per second (like 1000/s)")
}

/// `probe-latency --duration`.
pub fn probe_duration(text: &str) -> Result<Duration, TypedError> {
    typed::duration_in(text, PROBE_DURATION_MIN, PROBE_DURATION_MAX)
}

/// A node id the kernel can have.
pub fn node_id(text: &str) -> Result<u32, TypedError> {
    typed::whole_in(text, 0, u64::from(NODE_MAX), "a node id").map(|n| n as u32)
}

/// `runs --settle`, `--release-after`.
pub fn run_delay(text: &str) -> Result<Duration, TypedError> {
    typed::duration_in(text, RUN_DELAY_MIN, RUN_DELAY_MAX)
}

/// `runs --timeout`.
pub fn run_timeout(text: &str) -> Result<Duration, TypedError> {
    typed::duration_in(text, RUN_DELAY_MIN, RUN_TIMEOUT_MAX)
}

/// `bisect --rounds`.
pub fn rounds(text: &str) -> Result<u32, TypedError> {
    typed::whole_in(text, u64::from(ROUNDS_MIN), u64::from(ROUNDS_MAX), "a reading count").map(|n| n as u32)
}

/// `bisect --settle`.
pub fn settle(text: &str) -> Result<Duration, TypedError> {
    typed::duration_in(text, SETTLE_MIN, SETTLE_MAX)
}

/// `bisect --metric-timeout`.
pub fn metric_timeout(text: &str) -> Result<Duration, TypedError> {
    typed::duration_in(text, METRIC_TIMEOUT_MIN, METRIC_TIMEOUT_MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_parser_quotes_its_own_limits() {
        let refused = |r: Result<Duration, TypedError>| r.unwrap_err().to_string();
        assert!(refused(watch_duration("169h")).contains("from 1ms to 7 days (168h)"));
        assert_eq!(watch_duration("168h"), Ok(WATCH_MAX));
        assert!(refused(pmu_duration("9ms")).contains("from 10ms to 7 days (168h)"));
        assert!(refused(memwatch_interval("99ms")).contains("from 100ms to 1h"));
        assert_eq!(memwatch_interval("1h"), Ok(INTERVAL_MAX));
        assert!(refused(memwatch_duration("8d")).contains("from 100ms to 7 days (168h)"));
        assert!(refused(sample_duration("2h")).contains("from 100ms to 1h"));
        assert!(refused(damon_duration("500ms")).contains("from 1s to 1h"));
        assert!(refused(poll_interval("11s")).contains("from 1ms to 10s"));
        assert_eq!(pid("4194304"), Ok(PID_MAX));
        assert!(pid("4194305").unwrap_err().to_string().contains("from 1 to 4194304"));
        assert_eq!(threads("4096"), Ok(THREADS_MAX));
        assert!(threads("4097").is_err());
        assert!(top_lines("1001")
            .unwrap_err()
            .to_string()
            .contains("a line count from 1 to 1000"));
        assert!(sample_hz("9").unwrap_err().to_string().contains("from 10 to 20000"));
        assert_eq!(sample_ms("60s"), Ok(60_000));
        assert!(delays_ns("1000001")
            .unwrap_err()
            .to_string()
            .contains("from 0 to 1000000"));
        assert_eq!(buffer_size("16T"), Ok(BUFFER_MAX_BYTES));
        assert!(buffer_size("2K")
            .unwrap_err()
            .to_string()
            .contains("a buffer is 4K to 16T"));
        assert!(size_sweep(&vec!["4K"; 65].join(",")).is_err());
        assert!(cpu_list(&vec!["1"; 20_000].join(","))
            .unwrap_err()
            .to_string()
            .contains("at most 32768"));
        assert!(node_list(" ").is_err());
    }

    #[test]
    fn rates_are_bounded() {
        assert_eq!(rate_per_sec("1000/s"), Ok(1000));
        assert_eq!(rate_per_sec("1"), Ok(1));
        assert_eq!(rate_per_sec("1000000/s"), Ok(PROBE_RATE_MAX));
        for bad in [
            "0",
            "0/s",
            "1000001/s",
            "-1",
            "1e3",
            "1.5/s",
            "/s",
            "",
            "nan",
            "18446744073709551616",
        ] {
            assert!(
                rate_per_sec(bad).unwrap_err().to_string().contains("from 1 to 1000000"),
                "{bad}"
            );
        }
    }

    #[test]
    fn probe_durations_nodes_runs_and_bisect_steps_are_bounded() {
        assert_eq!(probe_duration("24h"), Ok(PROBE_DURATION_MAX));
        assert!(probe_duration("25h").is_err() && probe_duration("9ms").is_err());
        assert_eq!(node_id("0"), Ok(0));
        assert!(node_id("1024").is_err() && node_id("-1").is_err());
        assert_eq!(run_delay("200ms"), Ok(Duration::from_millis(200)));
        assert!(run_delay("0").is_err() && run_delay("61m").is_err());
        assert_eq!(run_timeout("168h"), Ok(RUN_TIMEOUT_MAX));
        assert_eq!(rounds("3"), Ok(3));
        assert!(rounds("0").is_err() && rounds("2").is_err() && rounds("101").is_err());
        assert!(settle("2h").unwrap_err().to_string().contains("from 1ms to 1h"));
        assert!(metric_timeout("5ms")
            .unwrap_err()
            .to_string()
            .contains("from 10ms to 1h"));
    }
}
