//! A set of metric readings and the rule that says whether two sets differ.
//!
//! The rule is deliberately plain, so a user can check it by hand: two
//! sets differ when the gap between their medians is larger than both
//! their own spreads (max − min) added together, *and* larger than
//! `min_change` of the baseline's median. The first part is "more than the
//! baseline's own noise"; the second keeps a perfectly steady metric (a
//! spread of 0) from calling a 0.1% wobble a finding.

use serde::Serialize;

/// The smallest relative change of the median that counts by default.
pub const DEFAULT_MIN_CHANGE: f64 = 0.05;

/// Readings of the metric, in the order they were taken.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Readings {
    pub values: Vec<f64>,
    pub median: f64,
    pub min: f64,
    pub max: f64,
}

impl Readings {
    /// `None` without a finite value.
    pub fn new(values: Vec<f64>) -> Option<Readings> {
        let mut sorted: Vec<f64> = values.iter().copied().filter(|v| v.is_finite()).collect();
        if sorted.is_empty() || sorted.len() != values.len() {
            return None;
        }
        sorted.sort_by(f64::total_cmp);
        let n = sorted.len();
        let median = if n % 2 == 1 {
            sorted[n / 2]
        } else {
            (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0
        };
        Some(Readings {
            median,
            min: sorted[0],
            max: sorted[n - 1],
            values,
        })
    }

    /// max − min.
    pub fn spread(&self) -> f64 {
        self.max - self.min
    }
}

/// How a set of readings compares with the baseline.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Change {
    /// (median − baseline median) / |baseline median|; 0 for a 0 baseline.
    pub relative: f64,
    /// The gap the rule required, relative to the baseline median.
    pub threshold: f64,
    pub significant: bool,
}

/// Whether `moved` differs from `baseline` by the rule above.
pub fn changed(baseline: &Readings, moved: &Readings, min_change: f64) -> Change {
    let gap = moved.median - baseline.median;
    let scale = baseline.median.abs();
    let noise = baseline.spread() + moved.spread();
    let floor = min_change * scale;
    let required = noise.max(floor);
    let relative = if scale > 0.0 { gap / scale } else { 0.0 };
    let threshold = if scale > 0.0 { required / scale } else { 0.0 };
    // A zero baseline has no scale for min_change: any gap above the noise counts.
    let significant = gap.abs() > required && (scale > 0.0 || gap != 0.0);
    Change {
        relative,
        threshold,
        significant,
    }
}
