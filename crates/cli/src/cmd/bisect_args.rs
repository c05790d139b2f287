//! What the user may type for `bisect`; nothing here looks at the system.

use std::path::PathBuf;
use std::time::Duration;

use clap::Args;

use super::process_args::parse_range;
use numasleuth_app::limits::text::{metric_timeout, rounds, settle};
use numasleuth_app::limits::METRIC_CMD_MAX_CHARS;

fn metric_cmd(text: &str) -> Result<String, String> {
    if text.trim().is_empty() {
        return Err("the metric command is empty; give a shell command that prints the workload's rate".into());
    }
    if text.chars().count() > METRIC_CMD_MAX_CHARS {
        return Err(format!(
            "the metric command is longer than {METRIC_CMD_MAX_CHARS} characters"
        ));
    }
    if text.contains('\0') {
        return Err("the metric command contains a NUL byte".into());
    }
    Ok(text.to_string())
}

/// `5%`, `5` (percent) or `0.5%`: the smallest relative change that counts.
fn min_change(text: &str) -> Result<f64, String> {
    let trimmed = text.trim();
    let number = trimmed.strip_suffix('%').unwrap_or(trimmed).trim();
    let refused = || format!("`{trimmed}` is not a percentage from 0.1% to 100% such as 5%");
    let percent: f64 = number.parse().map_err(|_| refused())?;
    if !percent.is_finite() || !(0.1..=100.0).contains(&percent) {
        return Err(refused());
    }
    Ok(percent / 100.0)
}

#[derive(Debug, Args)]
#[command(group(clap::ArgGroup::new("what").required(true).args(["range", "section"])))]
pub struct BisectArgs {
    /// The process whose pages are bisected.
    #[command(flatten)]
    pub process: super::pid_arg::PidArg,
    /// A shell command (`sh -c`) that prints the workload's current rate:
    /// the first number of the last output line holding one is read. It
    /// must exit 0.
    #[arg(long, value_name = "CMD", value_parser = metric_cmd)]
    pub metric_cmd: String,
    /// A lower metric is better (latency, time); only the wording changes:
    /// a change either way counts.
    #[arg(long)]
    pub lower_is_better: bool,
    /// Bisect the pages of this section (e.g. .bss, .data) of the program,
    /// or of --object.
    #[arg(long, value_name = "NAME")]
    pub section: Option<String>,
    /// The mapped object (path or file name) for --section.
    #[arg(long, value_name = "PATH", requires = "section")]
    pub object: Option<String>,
    /// Bisect the pages of this address range (hex, END exclusive).
    #[arg(long, value_name = "START-END", value_parser = parse_range)]
    pub range: Option<(u64, u64)>,
    /// Where moved pages go. Default on a two-node machine: the node each
    /// page is not on; required with more nodes.
    #[arg(long = "to-node", value_name = "N")]
    pub to_node: Option<u32>,
    /// How long to wait after each move before reading: 1ms to 1h.
    #[arg(long, value_name = "DURATION", default_value = "2s", value_parser = settle)]
    pub settle: Duration,
    /// Readings of the metric per batch, spaced by the metric's own update
    /// period (timed while the baseline settles); the baseline takes two
    /// batches, a step one, and up to three while its evidence is in
    /// between: 3 to 100.
    #[arg(long, value_name = "N", default_value = "3", value_parser = rounds)]
    pub rounds: u32,
    /// How far beyond the baseline's range, relative to its median, every
    /// reading of a step must lie for the step to count: 0.1% to 100%.
    #[arg(long, value_name = "PERCENT", default_value = "5%", value_parser = min_change)]
    pub min_change: f64,
    /// Kill a metric command that runs longer than this: 10ms to 1h.
    #[arg(long, value_name = "DURATION", default_value = "60s", value_parser = metric_timeout)]
    pub metric_timeout: Duration,
    /// Move pages (the default checks the pages and the metric command and
    /// prints the plan). Writes an undo journal before the first move.
    #[arg(long)]
    pub apply: bool,
    /// Where --apply writes its journal [default: ./numasleuth-bisect-<pid>-<time>.journal.json].
    #[arg(long, value_name = "FILE", requires = "apply")]
    pub journal: Option<PathBuf>,
    /// Print JSON (schema numasleuth.bisect/1) instead of text.
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub output: super::output::OutputArgs,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn min_change_takes_percentages() {
        assert_eq!(min_change("5%"), Ok(0.05));
        assert_eq!(min_change("12.5"), Ok(0.125));
        for bad in ["0", "0.01%", "101%", "-5%", "NaN", "inf", "five", ""] {
            assert!(min_change(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn metric_commands_and_rounds_are_bounded() {
        assert!(metric_cmd("  ").is_err());
        assert!(metric_cmd(&"x".repeat(METRIC_CMD_MAX_CHARS + 1)).is_err());
        assert!(metric_cmd("cat /tmp/rate").is_ok());
        assert_eq!(rounds("3"), Ok(3));
        assert!(rounds("0").is_err() && rounds("2").is_err() && rounds("101").is_err());
    }
}
