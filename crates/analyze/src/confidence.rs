//! How far a measured finding can be trusted, from the measurement's own
//! noise.
//!
//! A finding drawn from a timed measurement (a `mem` cell, a core-to-core
//! pair) is only as good as the cells it rests on. On a noisy VM a 0.1
//! against 0.3 GB/s bandwidth pair whose samples spread over half their
//! median says nothing about the link, yet it once ranked as CRITICAL above
//! a real setting problem. So every measured finding carries a
//! [`Confidence`]: the widest spread and the fewest samples among its cells,
//! and whether those hold. One that does not hold is shown, but at most as
//! INFO and named "inconclusive".

use serde::Serialize;

use crate::evidence::Evidence;
use crate::findings::{Finding, Severity};
use crate::stats::{Summary, SPREAD_LIMIT};

/// Fewer samples than this give no spread worth judging (`rows_spread_warning`
/// says the same to people).
pub const MIN_SAMPLES: usize = 3;

/// Whether one measured figure is steady enough to judge by: at least
/// [`MIN_SAMPLES`] samples, and no wider than [`SPREAD_LIMIT`] between p10
/// and p90. `mem` measures a cell again while this is false.
pub fn holds(summary: &Summary) -> bool {
    summary.samples >= MIN_SAMPLES && summary.relative_spread() <= SPREAD_LIMIT
}

/// The confidence of a measured finding.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Confidence {
    /// The widest (p90 − p10) / median among the figures the finding rests
    /// on, in percent.
    pub spread_pct: f64,
    /// The fewest samples behind any of those figures.
    pub samples: u32,
    /// Every figure [`holds`]: the finding may keep its severity.
    pub holds: bool,
    /// The spread above which a figure does not hold, in percent.
    pub spread_limit_pct: f64,
}

impl Confidence {
    /// The confidence of a finding resting on `figures`; `None` when there
    /// are none.
    pub fn of<'a>(figures: impl IntoIterator<Item = &'a Summary>) -> Option<Confidence> {
        let mut out: Option<Confidence> = None;
        for s in figures {
            let spread_pct = s.relative_spread() * 100.0;
            let samples = u32::try_from(s.samples).unwrap_or(u32::MAX);
            let c = out.get_or_insert(Confidence {
                spread_pct,
                samples,
                holds: true,
                spread_limit_pct: SPREAD_LIMIT * 100.0,
            });
            c.spread_pct = c.spread_pct.max(spread_pct);
            c.samples = c.samples.min(samples);
            c.holds &= holds(s);
        }
        out
    }
}

/// A measured finding from an emulated CPU (`Topology::cpu_is_emulated`):
/// at most INFO, saying why. Its spread may be small, yet the figures are
/// the emulator's: every node is the same host memory, so no ratio between
/// them describes a link. In the two-node TCG guest steady cells gave
/// remote memory 0.88× the latency and 1.41× the bandwidth of local.
pub fn emulated(mut finding: Finding) -> Finding {
    let was = finding.severity;
    finding.severity = finding.severity.min(Severity::Info);
    finding.title = format!("{} (emulated CPU)", finding.title);
    let demoted = if was > Severity::Info {
        format!(" (it would be {}, on hardware)", was.as_str())
    } else {
        String::new()
    };
    finding.evidence.push(Evidence::new(
        "/proc/cpuinfo",
        format!(
            "measured on an emulated CPU (QEMU TCG): every node is the same host memory behind the emulator, so \
             these timings say nothing about the hardware's links{demoted}"
        ),
    ));
    finding
}

/// `finding` with its confidence. One that does not hold drops to INFO, its
/// title says "inconclusive: spread N%", and an evidence line carries the
/// spread as a value (`source`: where the figures were measured).
pub fn qualify(mut finding: Finding, confidence: Option<Confidence>, source: &str) -> Finding {
    finding.confidence = confidence;
    let Some(c) = confidence.filter(|c| !c.holds) else {
        return finding;
    };
    let was = finding.severity;
    finding.severity = finding.severity.min(Severity::Info);
    let note = inconclusive(&c);
    finding.title = format!("{} ({note})", finding.title);
    let demoted = if was > Severity::Info {
        format!(" (it would be {}, were the figures steady)", was.as_str())
    } else {
        String::new()
    };
    finding.evidence.push(
        Evidence::new(
            source,
            format!(
                "{note}: the figures spread up to {:.0}% between p10 and p90 over as few as {} samples; a \
                 verdict needs {:.0}% or less and {MIN_SAMPLES} samples or more{demoted}; \
                 rerun on a quiet machine or with more --samples",
                c.spread_pct, c.samples, c.spread_limit_pct
            ),
        )
        .with("spread_pct", c.spread_pct)
        .with("spread_limit_pct", c.spread_limit_pct)
        .with("samples", c.samples),
    );
    finding
}

/// "inconclusive: spread N%", the words a finding that does not hold says.
pub fn inconclusive(c: &Confidence) -> String {
    format!("inconclusive: spread {:.0}%", c.spread_pct)
}

#[cfg(test)]
#[path = "confidence_tests.rs"]
mod tests;
