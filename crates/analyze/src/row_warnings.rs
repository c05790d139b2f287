//! The warnings about the rows of one measurement, summed up by kind.
//!
//! A latency sweep over nine sizes used to print nine near-identical
//! "too noisy" sentences of 300 characters each. A person needs one line
//! per kind of problem: how many rows have it, the worst one, and the flag
//! that helps (`--samples`, `--sample-ms`). The JSON keeps every row's
//! figures, so nothing is lost by saying it once.

use crate::stats::{rows_spread_warning, Summary};
use crate::timing::{ByteSamples, TimedSamples};

/// The samples a row's figure is derived from: a chase's timings (ns per
/// operation) or a stream's bytes over time (bytes per second).
pub trait RowSamples {
    fn summary(&self) -> Option<Summary>;
    /// Tells `checks` of this row, whose figure is `summary`.
    fn check(&self, checks: &mut RowChecks, name: String, summary: Option<&Summary>);
}

impl RowSamples for TimedSamples {
    fn summary(&self) -> Option<Summary> {
        TimedSamples::summary(self)
    }

    fn check(&self, checks: &mut RowChecks, name: String, summary: Option<&Summary>) {
        checks.add(name, self, summary);
    }
}

impl RowSamples for ByteSamples {
    fn summary(&self) -> Option<Summary> {
        ByteSamples::summary(self)
    }

    fn check(&self, checks: &mut RowChecks, name: String, summary: Option<&Summary>) {
        checks.add_summary(name, summary);
    }
}

/// Each row's summary, derived from its timed samples, and the warnings
/// the rows call for, one line per kind (`noun` names the rows).
pub fn timed_rows<'a, S: RowSamples + 'a>(
    noun: &'static str,
    rows: impl IntoIterator<Item = (String, &'a S)>,
) -> (Vec<Option<Summary>>, Vec<String>) {
    let mut checks = RowChecks::new(noun);
    let summaries = rows
        .into_iter()
        .map(|(name, samples)| {
            let summary = samples.summary();
            samples.check(&mut checks, name, summary.as_ref());
            summary
        })
        .collect();
    (summaries, checks.warnings())
}

/// Rows checked so far, for one table (`noun`: "sizes", "cells").
#[derive(Debug, Clone)]
pub struct RowChecks {
    noun: &'static str,
    summaries: Vec<(String, Summary)>,
    /// Rows with samples no longer than the clock's own cost: the row,
    /// how many such samples, of how many, and that cost in ns.
    short: Vec<(String, usize, usize, f64)>,
    rows: usize,
}

impl RowChecks {
    pub fn new(noun: &'static str) -> RowChecks {
        RowChecks {
            noun,
            summaries: Vec::new(),
            short: Vec::new(),
            rows: 0,
        }
    }

    /// One row: its timed samples and the summary derived from them.
    pub fn add(&mut self, name: String, samples: &TimedSamples, summary: Option<&Summary>) {
        let short = samples.at_or_below_overhead();
        if short > 0 {
            let overhead_ns = samples.timer_overhead_ns * samples.timer_reads_per_sample as f64;
            self.short
                .push((name.clone(), short, samples.elapsed_ns.len(), overhead_ns));
        }
        self.add_summary(name, summary);
    }

    /// One row known only by its summary (a bandwidth, whose samples are
    /// rates rather than timings).
    pub fn add_summary(&mut self, name: String, summary: Option<&Summary>) {
        self.rows += 1;
        if let Some(summary) = summary {
            self.summaries.push((name, *summary));
        }
    }

    /// At most one line per kind: too noisy, too few samples, samples
    /// shorter than the clock.
    pub fn warnings(&self) -> Vec<String> {
        let mut out = rows_spread_warning(self.noun, self.summaries.iter().map(|(n, s)| (n.clone(), s)));
        let worst = self.short.iter().max_by(|a, b| {
            let share = |r: &(String, usize, usize, f64)| r.1 as f64 / r.2.max(1) as f64;
            share(a).total_cmp(&share(b))
        });
        if let Some((name, short, total, overhead_ns)) = worst {
            out.push(format!(
                "{} of {} {} had samples no longer than the clock's own overhead ({overhead_ns:.0} ns), counted as \
                 0 ns (worst: {name}, {short} of {total} samples); take longer samples (--sample-ms)",
                self.short.len(),
                self.rows,
                self.noun
            ));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::summarize;

    fn samples(elapsed_ns: &[u64]) -> TimedSamples {
        TimedSamples {
            elapsed_ns: elapsed_ns.to_vec(),
            timer_overhead_ns: 20.0,
            timer_reads_per_sample: 1,
            ops_per_sample: 1,
        }
    }

    #[test]
    fn nine_noisy_rows_make_one_line_that_names_the_flag() {
        let mut checks = RowChecks::new("sizes");
        for size in 0..9 {
            let timed = samples(&[100, 300, 90, 100, 250]);
            let summary = summarize(&timed.ns_per_op());
            checks.add(format!("latency at {size} KiB"), &timed, summary.as_ref());
        }
        let warnings = checks.warnings();
        assert_eq!(warnings.len(), 1, "{warnings:?}");
        assert!(
            warnings[0].starts_with("9 of 9 sizes spread wider than"),
            "{warnings:?}"
        );
        assert!(warnings[0].contains("--samples"), "{warnings:?}");
    }

    #[test]
    fn each_kind_is_said_once() {
        let mut checks = RowChecks::new("cells");
        let thin = samples(&[100]);
        checks.add("a".into(), &thin, summarize(&thin.ns_per_op()).as_ref());
        let short = samples(&[10, 15, 100, 101, 102]);
        checks.add("b".into(), &short, summarize(&short.ns_per_op()).as_ref());
        let tight = samples(&[100, 101, 102, 100, 101]);
        checks.add("c".into(), &tight, summarize(&tight.ns_per_op()).as_ref());
        let warnings = checks.warnings();
        assert!(
            warnings
                .iter()
                .any(|w| w.starts_with("1 of 3 cells have fewer than 3 samples")),
            "{warnings:?}"
        );
        let short_line = warnings
            .iter()
            .find(|w| w.contains("clock's own overhead"))
            .expect("short samples");
        assert!(short_line.starts_with("1 of 3 cells had samples"), "{short_line}");
        assert!(short_line.contains("(worst: b, 2 of 5 samples)"), "{short_line}");
        assert!(short_line.ends_with("(--sample-ms)"), "{short_line}");
        assert!(RowChecks::new("cells").warnings().is_empty());
    }
}
