//! A set of metric readings, the metric's period, and when readings look
//! quantised. Whether two sets differ is [`super::decide`]'s.
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

    /// These readings followed by `more`'s.
    pub fn extended(&self, more: &Readings) -> Readings {
        let values = self.values.iter().chain(&more.values).copied().collect();
        // Both sets hold only finite values, so the union does too.
        Readings::new(values).unwrap_or_else(|| self.clone())
    }

    /// max − min.
    pub fn spread(&self) -> f64 {
        self.max - self.min
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
         less often than it was read or prints too few digits; a reading equal to a baseline reading never counts as \
         beyond it, and --min-change ({:.1}%) is the margin by which every reading had to clear the baseline's range \
         (spread {})",
        min_change * 100.0,
        baseline_spread.unwrap_or(0.0)
    ))
}
