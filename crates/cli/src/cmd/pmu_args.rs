//! What the user may type for `pmu` and `pmu diff`; nothing here looks at
//! the system.

use std::ffi::OsString;
use std::path::PathBuf;
use std::time::Duration;

use clap::{ArgGroup, Args, Subcommand};
use numasleuth_parse::typed::{self, TypedError};

/// Entries in an `--events` list, and characters in one entry: far beyond
/// what any PMU offers, small enough to hold.
pub const EVENTS_MAX: usize = 4096;
pub const EVENT_NAME_MAX: usize = 256;
/// `--ops-good`, `--ops-bad`, `--min-count`: a count, not an overflow.
pub const COUNT_MAX: u64 = 1_000_000_000_000_000_000;

#[derive(Debug, Args)]
#[command(
    args_conflicts_with_subcommands = true,
    subcommand_negates_reqs = true,
    group(ArgGroup::new("target").required(true).args(["pid", "command"]))
)]
pub struct PmuArgs {
    #[command(subcommand)]
    pub sub: Option<PmuSub>,
    /// Count this running process, every thread, for --duration or until
    /// Ctrl-C: a PID (1 to 4194304) or a process name.
    #[arg(short = 'p', long, value_name = "PID", value_parser = super::pid_arg::process)]
    pub pid: Option<super::pid_arg::ProcessRef>,
    /// How long to count --pid: 10ms to 7 days (168h) [default: until
    /// Ctrl-C or SIGTERM, which print the counts so far, like
    /// `perf stat -p`].
    #[arg(long, value_name = "DURATION", value_parser = numasleuth_app::limits::text::pmu_duration, requires = "pid")]
    pub duration: Option<Duration>,
    /// `all` (every generic event and sysfs alias), or a comma list of
    /// names: `cycles`, `page-faults`, `msr/tsc`, or raw terms of a PMU
    /// ending in a slash, `cpu/event=0x3c,umask=0x00/`. At most 4096.
    #[arg(long, value_name = "all|LIST", default_value = "all", value_parser = parse_events)]
    pub events: EventsArg,
    /// Print JSON (schema numasleuth.pmu/1) instead of text.
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub output: super::output::OutputArgs,
    /// The command to start and count until it exits (after `--`); its
    /// output goes to stderr, the report to stdout.
    #[arg(last = true, value_name = "CMD")]
    pub command: Vec<OsString>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EventsArg {
    All,
    List(Vec<String>),
}

#[derive(Debug, Subcommand)]
pub enum PmuSub {
    /// Rank every event by how much it differs between two `pmu --json`
    /// files (a good run and a bad run), normalised per second, per event
    /// or per op.
    Diff(PmuDiffArgs),
}

#[derive(Debug, Args)]
pub struct PmuDiffArgs {
    /// The good run: a file written by `numasleuth pmu --json`.
    #[arg(value_name = "GOOD.json")]
    pub good: PathBuf,
    /// The bad run, compared against the good one.
    #[arg(value_name = "BAD.json")]
    pub bad: PathBuf,
    /// Divide each count by: `second` (the run's duration), `op` (needs
    /// --ops-good and --ops-bad), or an event both runs counted, such as
    /// `instructions`.
    #[arg(long, value_name = "second|op|EVENT", default_value = "second", value_parser = parse_per)]
    pub per: String,
    /// Operations the good run did (with --per op), 1 to 10^18.
    #[arg(long, value_name = "OPS", value_parser = parse_count)]
    pub ops_good: Option<u64>,
    /// Operations the bad run did (with --per op), 1 to 10^18.
    #[arg(long, value_name = "OPS", value_parser = parse_count)]
    pub ops_bad: Option<u64>,
    /// Events below this count in both runs are listed as too few to rank
    /// rather than ranked on noise (0 to 10^18).
    #[arg(long, value_name = "COUNT", default_value_t = 100, value_parser = parse_min_count)]
    pub min_count: u64,
    /// Print JSON (schema numasleuth.pmu_diff/1) instead of text.
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub output: super::output::OutputArgs,
}

fn parse_count(text: &str) -> Result<u64, TypedError> {
    typed::whole_in(text, 1, COUNT_MAX, "an operation count")
}

fn parse_min_count(text: &str) -> Result<u64, TypedError> {
    typed::whole_in(text, 0, COUNT_MAX, "a count")
}

fn parse_per(text: &str) -> Result<String, String> {
    let text = text.trim();
    if text.is_empty() || text.len() > EVENT_NAME_MAX || text.chars().any(char::is_control) {
        return Err(format!(
            "give second, op or an event name of 1 to {EVENT_NAME_MAX} characters"
        ));
    }
    Ok(text.to_string())
}

/// Splits on commas, except the commas between the terms of
/// `pmu/event=…,umask=…/`: inside an open `pmu/` part, a comma separates
/// events only while that part has no `=`.
pub fn parse_events(text: &str) -> Result<EventsArg, String> {
    if text.trim() == "all" {
        return Ok(EventsArg::All);
    }
    let mut names = Vec::new();
    let mut current = String::new();
    for c in text.chars() {
        let slashes = current.matches('/').count();
        let in_terms = slashes == 1 && current.split_once('/').is_some_and(|(_, rest)| rest.contains('='));
        if c == ',' && !in_terms {
            names.push(std::mem::take(&mut current));
        } else {
            current.push(c);
        }
        if names.len() > EVENTS_MAX {
            return Err(format!("more than {EVENTS_MAX} events given"));
        }
    }
    names.push(current);
    let names: Vec<String> = names.into_iter().map(|n| n.trim().to_string()).collect();
    if names.len() > EVENTS_MAX {
        return Err(format!("more than {EVENTS_MAX} events given"));
    }
    for name in &names {
        if name.is_empty() || name.len() > EVENT_NAME_MAX || name.chars().any(char::is_control) {
            return Err(format!(
                "`{}` is not an event name: give all, or names of 1 to {EVENT_NAME_MAX} characters separated by commas",
                name.escape_debug()
            ));
        }
        if name == "all" {
            return Err("`all` cannot be mixed with event names".into());
        }
    }
    Ok(EventsArg::List(names))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn list(names: &[&str]) -> EventsArg {
        EventsArg::List(names.iter().map(|s| s.to_string()).collect())
    }

    #[test]
    fn event_lists_keep_raw_terms_whole() {
        assert_eq!(parse_events("all"), Ok(EventsArg::All));
        assert_eq!(
            parse_events("cycles,msr/tsc, page-faults"),
            Ok(list(&["cycles", "msr/tsc", "page-faults"]))
        );
        assert_eq!(
            parse_events("cpu/event=0x3c,umask=0x00/,cycles,msr/tsc/,task-clock"),
            Ok(list(&[
                "cpu/event=0x3c,umask=0x00/",
                "cycles",
                "msr/tsc/",
                "task-clock"
            ]))
        );
        assert_eq!(
            parse_events("cpu/event=0x3c,umask=0"),
            Ok(list(&["cpu/event=0x3c,umask=0"]))
        );
    }

    #[test]
    fn bad_event_lists_are_refused() {
        for text in ["", ",", "cycles,,instructions", "all,cycles", "a\nb"] {
            assert!(parse_events(text).is_err(), "{text:?}");
        }
        assert!(parse_events(&"x".repeat(257)).is_err());
        let many = vec!["cycles"; EVENTS_MAX + 1].join(",");
        assert!(parse_events(&many).unwrap_err().contains("more than 4096"));
        assert!(parse_events(&vec!["cycles"; EVENTS_MAX].join(",")).is_ok());
    }

    #[test]
    fn counts_are_bounded() {
        assert_eq!(parse_count("12"), Ok(12));
        for text in ["0", "-1", "1e3", "1000000000000000001", "x"] {
            assert!(parse_count(text).is_err(), "{text}");
        }
        assert_eq!(parse_min_count("0"), Ok(0));
        assert!(parse_per("").is_err() && parse_per(&"i".repeat(300)).is_err());
    }
}
