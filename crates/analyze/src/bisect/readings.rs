//! A set of metric readings and the rule that says whether two sets differ.
//!
//! The rule is deliberately plain, so a user can check it by hand: two
//! sets differ when the gap between their medians is larger than their
//! noise, *and* larger than `min_change` of the baseline's median. The
//! noise is the baseline's spread (max − min) plus the step's, where a
//! step's spread is never taken below the baseline's: a step whose
//! readings happen to agree (a rate file read twice within its update
//! period) has not shown that the metric stopped being noisy. The second
//! part keeps a perfectly steady metric (a spread of 0) from calling a
//! 0.1% wobble a finding.
//!
//! Readings are spaced by the metric's own period ([`period_ns`], from how
//! often its value changed while the baseline settled), and
//! [`quantised`] says when they still repeat each other exactly.

use std::time::Duration;

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
    let noise = baseline.spread() + moved.spread().max(baseline.spread());
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

/// The metric's update period: the median time between the changes of its
/// value in `samples` (`(time_ns, value)`, in time order), or `None` with
/// fewer than two changes to time.
pub fn period_ns(samples: &[(u64, f64)]) -> Option<u64> {
    let changes: Vec<u64> = samples
        .windows(2)
        .filter(|w| w[1].1 != w[0].1)
        .map(|w| w[1].0)
        .collect();
    let mut intervals: Vec<u64> = changes.windows(2).map(|w| w[1].saturating_sub(w[0])).collect();
    if intervals.is_empty() {
        return None;
    }
    intervals.sort_unstable();
    Some(intervals[intervals.len() / 2])
}

/// Readings are never spaced further apart than this, whatever the period.
pub const SPACING_MAX: Duration = Duration::from_secs(60);

/// What the metric did while the baseline settled: how many readings were
/// taken over how long, and its period ([`period_ns`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MetricPeriod {
    pub readings: usize,
    pub over: Duration,
    /// The median time between changes of its value; `None` when it
    /// changed fewer than twice.
    pub period: Option<Duration>,
}

impl MetricPeriod {
    /// From the settle's readings (`(ns since the start, value)`, in time
    /// order), as `measure::metric_series` takes them.
    pub fn of(samples: &[(u64, f64)]) -> MetricPeriod {
        MetricPeriod {
            readings: samples.len(),
            over: Duration::from_nanos(samples.last().map_or(0, |s| s.0)),
            period: period_ns(samples).map(Duration::from_nanos),
        }
    }

    /// How far apart a step's readings are taken: one period (at most
    /// [`SPACING_MAX`]), so each reading can see a new value.
    pub fn spacing(&self) -> Duration {
        self.period.unwrap_or(Duration::ZERO).min(SPACING_MAX)
    }
}

/// When the readings look quantised: more than half of the consecutive
/// readings within the sets repeat the one before exactly. Then a step's
/// own spread says little, and the note says what guards against noise.
pub fn quantised<'a>(sets: impl IntoIterator<Item = &'a Readings>, min_change: f64) -> Option<String> {
    let (mut pairs, mut repeats, mut baseline_spread) = (0usize, 0usize, None);
    for set in sets {
        baseline_spread.get_or_insert(set.spread());
        for w in set.values.windows(2) {
            pairs += 1;
            repeats += usize::from(w[0] == w[1]);
        }
    }
    if pairs == 0 || repeats * 2 <= pairs {
        return None;
    }
    Some(format!(
        "the readings look quantised: {repeats} of {pairs} repeated the reading before exactly, so the metric updates \
         less often than it was read or prints too few digits; each step's noise was taken as at least the \
         baseline's spread ({}), and --min-change ({:.1}%) is what keeps a small wobble from counting",
        baseline_spread.unwrap_or(0.0),
        min_change * 100.0
    ))
}
