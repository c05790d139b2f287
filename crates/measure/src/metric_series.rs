//! `bisect`'s readings of the user's metric command over time: one
//! reading, a wait that an interrupt cuts short, the readings taken while
//! a placement settles (to time how often the metric changes), and a
//! step's rounds of readings spaced by that period.
//!
//! Why here: running the user's command on a schedule is measuring, like
//! `runs`; the stop token comes from the CLI's one signal mechanism and
//! is only polled here. The period and the verdict are derived in analyze.

use std::time::{Duration, Instant};

use numasleuth_model::stop::Stop;

use crate::shell_metric::run_shell;

/// While a placement settles, the metric is read this often to time how
/// often its value changes (its period).
pub const PROBE_INTERVAL: Duration = Duration::from_millis(100);
/// Readings kept to time the period (a long settle reads no more).
pub const PROBE_READINGS_MAX: usize = 600;

/// Why reading the metric stopped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MetricStop {
    /// The stop token was set (Ctrl-C, SIGTERM, SIGHUP).
    Interrupted,
    /// The command failed, timed out or printed no number; says which.
    Failed(String),
}

/// The user's metric command, read under one stop token.
pub struct MetricCommand<'a> {
    /// Run with `sh -c`.
    pub command: &'a str,
    /// A reading that takes longer is killed and is an error.
    pub timeout: Duration,
    /// The number a line of output holds, if any (bisect: its first).
    pub number: fn(&str) -> Option<f64>,
    pub stop: &'a Stop,
}

impl MetricCommand<'_> {
    /// One reading, cancelled by the stop token.
    pub fn read(&self) -> Result<f64, MetricStop> {
        read_metric(self.command, self.timeout, self.number, self.stop)
    }

    /// Ends with [`MetricStop::Interrupted`] once a stop is requested.
    pub fn check_interrupt(&self) -> Result<(), MetricStop> {
        if self.stop.requested() {
            return Err(MetricStop::Interrupted);
        }
        Ok(())
    }

    /// Waits `duration` with the stop token's own sleep, which an interrupt
    /// cuts short (a zero wait does not look at the token at all).
    pub fn wait(&self, duration: Duration) -> Result<(), MetricStop> {
        if !duration.is_zero() && self.stop.sleep(duration) {
            return Err(MetricStop::Interrupted);
        }
        Ok(())
    }

    /// Spends `settle` reading the metric every [`PROBE_INTERVAL`] (at
    /// most [`PROBE_READINGS_MAX`] times) and returns the readings as
    /// `(ns since the start, value)`, from which analyze times the
    /// metric's period.
    pub fn readings_while_settling(&self, settle: Duration) -> Result<Vec<(u64, f64)>, MetricStop> {
        let start = Instant::now();
        let mut samples: Vec<(u64, f64)> = Vec::new();
        while start.elapsed() + PROBE_INTERVAL <= settle && samples.len() < PROBE_READINGS_MAX {
            self.check_interrupt()?;
            let value = self.read()?;
            samples.push((start.elapsed().as_nanos() as u64, value));
            let next = PROBE_INTERVAL.saturating_mul(samples.len() as u32);
            self.wait(next.saturating_sub(start.elapsed()))?;
        }
        self.wait(settle.saturating_sub(start.elapsed()))?;
        Ok(samples)
    }

    /// A step's `rounds` readings, `spacing` apart.
    pub fn rounds(&self, rounds: u32, spacing: Duration) -> Result<Vec<f64>, MetricStop> {
        let mut values = Vec::with_capacity(rounds as usize);
        for round in 0..rounds {
            if round > 0 {
                self.wait(spacing)?;
            }
            self.check_interrupt()?;
            values.push(self.read()?);
        }
        Ok(values)
    }
}

fn last_lines(tail: &[String]) -> String {
    let shown: Vec<&str> = tail.iter().rev().take(3).rev().map(String::as_str).collect();
    if shown.is_empty() {
        "it printed nothing".into()
    } else {
        format!("its last lines: {}", shown.join(" | "))
    }
}

/// One reading of `command`: `number` of the last line of output holding
/// one. A failed, timed-out or silent command is an error saying which,
/// with its last lines; a stop requested of `cancel` meanwhile ends it as
/// interrupted.
pub fn read_metric(
    command: &str,
    timeout: Duration,
    number: fn(&str) -> Option<f64>,
    cancel: &Stop,
) -> Result<f64, MetricStop> {
    let has_number = |line: &str| number(line).is_some();
    let run = run_shell(command, timeout, cancel, &has_number).map_err(|e| MetricStop::Failed(e.to_string()))?;
    if run.cancelled {
        return Err(MetricStop::Interrupted);
    }
    let shown = format!("the metric command `{command}`");
    if run.timed_out {
        return Err(MetricStop::Failed(format!(
            "{shown} did not finish within {} ms (--metric-timeout) and was killed",
            timeout.as_millis()
        )));
    }
    if run.exit.code != Some(0) {
        let how = match (run.exit.code, run.exit.signal) {
            (Some(code), _) => format!("exit status {code}"),
            (None, Some(signal)) => format!("signal {signal}"),
            (None, None) => "an unknown status".into(),
        };
        return Err(MetricStop::Failed(format!(
            "{shown} failed ({how}); {}",
            last_lines(&run.output.tail)
        )));
    }
    run.output
        .last_match
        .as_ref()
        .and_then(|(_, line)| number(line))
        .ok_or_else(|| MetricStop::Failed(format!("{shown} printed no number; {}", last_lines(&run.output.tail))))
}

#[cfg(test)]
#[path = "metric_series_tests.rs"]
mod tests;
