//! Whether a step's readings differ from the baseline's: decided on
//! separation, not on spreads.
//!
//! A spread (max − min) is what one outlier inflates: on a busy host one
//! reading of 4.94M among 2.3–2.5M, against a baseline of 0.95–1.50M, made
//! the old rule (the gap between medians must exceed both spreads) ask for
//! a 327% change and call a 2.6× one "no effect". The rule here looks at
//! every (step reading, baseline reading) pair instead, with a margin of
//! `min_change` of the baseline median, `m`:
//!
//! - **separated** (every step reading beyond the baseline's whole range by
//!   more than `m`, on one side): the step changed the metric;
//! - at most half of the pairs differ by more than `m` in either
//!   direction: it did not;
//! - in between, the evidence is not enough either way ([`Evidence::Unsure`]):
//!   the search takes another batch of readings of the step and of the
//!   baseline, up to [`BATCHES_MAX`] batches. After the last one, the step
//!   counts when at least [`FINAL_PAIRS_MIN`] of the pairs differ by more
//!   than `m` the same way, a share that one outlier among the readings
//!   moves by one reading's worth only.
//!
//! The rates this gives, on seeded noisy series (noise level × effect ×
//! outlier probability), are computed by `crates/analyze/tests/bisect_rates.rs`
//! and listed in docs/bisect.md.

use serde::Serialize;

use super::readings::Readings;

/// Batches of readings a step may take: the first, and more while the
/// evidence is in between.
pub const BATCHES_MAX: u32 = 3;
/// At most this share of pairs beyond the margin, in each direction, and
/// the step did not change the metric.
pub const UNCHANGED_PAIRS_MAX: f64 = 0.5;
/// After the last batch, the share of pairs beyond the margin (one
/// direction) a step needs to count without being separated.
pub const FINAL_PAIRS_MIN: f64 = 0.75;

/// What a step's readings say so far.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Evidence {
    Changed,
    Unchanged,
    /// Neither yet: more readings are wanted (never after the last batch).
    Unsure,
}

/// How a set of readings compares with the baseline.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Change {
    /// (median − baseline median) / |baseline median|; 0 for a 0 baseline.
    pub relative: f64,
    /// How far from the baseline median, relative to it, every reading had
    /// to lie to be separated (the baseline's extreme plus the margin), in
    /// the direction of the change.
    pub threshold: f64,
    /// The step changed the metric ([`Evidence::Changed`]).
    pub significant: bool,
    pub evidence: Evidence,
    /// Every reading lay beyond the baseline's range by more than the margin.
    pub separated: bool,
    /// The share of (step, baseline) reading pairs that differ by more than
    /// the margin, in the direction where more do.
    pub pairs_beyond: f64,
}

/// Which way the readings moved.
#[derive(Clone, Copy, PartialEq)]
enum Side {
    Up,
    Down,
}

/// Compares `moved` with `baseline` by the rule above; `last` says whether
/// this is the step's last batch (then the answer is never `Unsure`).
pub fn changed(baseline: &Readings, moved: &Readings, min_change: f64, last: bool) -> Change {
    let scale = baseline.median.abs();
    let margin = min_change * scale;
    let (mut up, mut down) = (0usize, 0usize);
    for s in &moved.values {
        for b in &baseline.values {
            up += usize::from(*s > b + margin);
            down += usize::from(*s < b - margin);
        }
    }
    let pairs = moved.values.len() * baseline.values.len();
    let side = if up > down || (up == down && moved.median >= baseline.median) {
        Side::Up
    } else {
        Side::Down
    };
    let beyond = if side == Side::Up { up } else { down };
    let separated = pairs > 0 && beyond == pairs;
    let pairs_beyond = if pairs > 0 { beyond as f64 / pairs as f64 } else { 0.0 };
    let evidence = if separated {
        Evidence::Changed
    } else if pairs_beyond <= UNCHANGED_PAIRS_MAX {
        Evidence::Unchanged
    } else if !last {
        Evidence::Unsure
    } else if pairs_beyond >= FINAL_PAIRS_MIN {
        Evidence::Changed
    } else {
        Evidence::Unchanged
    };
    let edge = match side {
        Side::Up => baseline.max + margin - baseline.median,
        Side::Down => baseline.median - baseline.min + margin,
    };
    let relative_to = |x: f64| if scale > 0.0 { x / scale } else { 0.0 };
    Change {
        relative: relative_to(moved.median - baseline.median),
        threshold: relative_to(edge),
        significant: evidence == Evidence::Changed,
        evidence,
        separated,
        pairs_beyond,
    }
}

#[cfg(test)]
#[path = "decide_tests.rs"]
mod tests;
