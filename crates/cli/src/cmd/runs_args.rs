//! What the user may type for `runs`; nothing here looks at the system
//! (whether the start CPUs are allowed is checked in `runs.rs`).

use std::ffi::OsString;
use std::path::PathBuf;
use std::time::Duration;

use clap::Args;
use numasleuth_kernel::IdList;

use numasleuth_app::limits::text::{run_delay, run_timeout};
use numasleuth_app::limits::{RUNS_MAX, START_CPUS_MAX};
use numasleuth_parse::typed;

pub use numasleuth_app::runs::StartCpus;

/// `spread`, or numactl list items kept in the order typed: `2,0` starts
/// run 0 on CPU 2 and run 1 on CPU 0.
fn start_cpus(text: &str) -> Result<StartCpus, String> {
    if text.trim() == "spread" {
        return Ok(StartCpus::Spread);
    }
    let mut cpus = Vec::new();
    for item in text.split(',') {
        let list = IdList::parse_input(item).map_err(|e| e.to_string())?;
        if list.is_empty() {
            return Err(format!(
                "`{text}` has an empty item; give `spread` or CPUs like 0,2 or 0-3"
            ));
        }
        cpus.extend(list.iter());
        if cpus.len() > START_CPUS_MAX {
            return Err(format!("more than {START_CPUS_MAX} start CPUs given"));
        }
    }
    Ok(StartCpus::List(cpus))
}

/// At least as many runs as the bimodality test needs to judge, so a
/// series too short to answer is refused before it runs, not after.
fn runs_count(text: &str) -> Result<u32, String> {
    let min = numasleuth_analyze::runs::bimodal::MIN_RUNS as u64;
    typed::whole_in(text, min, u64::from(RUNS_MAX), "a run count")
        .map(|n| n as u32)
        .map_err(|e| format!("{e} (fewer than {min} runs cannot be told apart into two modes)"))
}

#[derive(Debug, Args)]
pub struct RunsArgs {
    /// How many times to run the workload: 4 (the fewest that can be split
    /// into two modes) to 1000.
    #[arg(short = 'n', long = "runs", value_name = "N", value_parser = runs_count)]
    pub runs: u32,
    /// Start run i pinned on the i-th of these CPUs, in turn: a list in
    /// numactl syntax in the order typed (`2,0`, `0-3`), or `spread`: every
    /// CPU this process may use, alternating nodes.
    #[arg(short = 'C', long, value_name = "LIST", default_value = "spread", value_parser = start_cpus)]
    pub start_cpus: StartCpus,
    /// After this long, widen every thread of the workload back to every
    /// CPU this process may use (from outside), as a service that starts on
    /// one core and then spreads: 1ms to 1h.
    #[arg(long, value_name = "DURATION", value_parser = run_delay)]
    pub release_after: Option<Duration>,
    /// The metric: the group named `value`, or else the first number, of
    /// the last output line (stdout or stderr) matching this regular
    /// expression (ASCII classes: \d, \w, \s and (?i) cover ASCII only).
    /// Default: wall time in seconds, lower is better.
    #[arg(long, value_name = "REGEX")]
    pub metric: Option<String>,
    /// A lower metric is better (wall time always is).
    #[arg(long)]
    pub lower_is_better: bool,
    /// When to sample where the workload's memory and threads are (if it
    /// still runs): 1ms to 1h.
    #[arg(long, value_name = "DURATION", default_value = "500ms", value_parser = run_delay)]
    pub settle: Duration,
    /// Kill a run (SIGKILL) that takes longer than this, and stop the
    /// series with an error: 1ms to 7 days. Default: no limit.
    #[arg(long, value_name = "DURATION", value_parser = run_timeout)]
    pub timeout: Option<Duration>,
    /// Print JSON (schema numasleuth.runs/1) instead of text.
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub output: super::output::OutputArgs,
    /// Also write a strip plot of the runs, coloured by mode, as SVG.
    #[arg(long, value_name = "FILE")]
    pub svg: Option<PathBuf>,
    /// Copy each run's last output lines to stderr.
    #[arg(short, long)]
    pub verbose: bool,
    /// The workload and its arguments, after `--`.
    #[arg(value_name = "CMD", required = true, last = true, value_parser = clap::value_parser!(OsString))]
    pub command: Vec<OsString>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn start_cpu_lists_keep_their_order() {
        assert_eq!(start_cpus("spread"), Ok(StartCpus::Spread));
        assert_eq!(start_cpus("2,0"), Ok(StartCpus::List(vec![2, 0])));
        assert_eq!(start_cpus("3,0-1,0"), Ok(StartCpus::List(vec![3, 0, 1, 0])));
        for bad in ["", "1,,2", "x", "5-1", "0-4294967296", "sprea"] {
            assert!(start_cpus(bad).is_err(), "{bad}");
        }
        assert!(start_cpus("0-5000").unwrap_err().contains("more than 4096"));
    }

    #[test]
    fn counts_and_delays_have_limits() {
        assert_eq!(runs_count("4"), Ok(4));
        // Refused up front, not after running: two runs cannot be judged.
        assert!(runs_count("2").unwrap_err().contains("from 4 to 1000"));
        assert!(runs_count("1").unwrap_err().contains("from 4 to 1000"));
        assert!(runs_count("1001").is_err());
    }
}
