//! Honest statistics for benchmark samples: median with p10/p90 and the
//! count, and a plain warning when the spread is too wide to trust.
//!
//! Samples from a measurement are not normally distributed (a noisy VM
//! adds a long upper tail), so we report order statistics, never a mean
//! with a standard deviation.

use serde::{Deserialize, Serialize};

/// Median, 10th and 90th percentile, and how many samples they came from.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    pub median: f64,
    pub p10: f64,
    pub p90: f64,
    pub samples: usize,
}

/// Above this (p90 − p10) / median, a figure is too noisy to compare.
pub const SPREAD_LIMIT: f64 = 0.20;

/// Summarises the finite values; `None` when there are none.
pub fn summarize(values: &[f64]) -> Option<Summary> {
    let mut sorted: Vec<f64> = values.iter().copied().filter(|v| v.is_finite()).collect();
    if sorted.is_empty() {
        return None;
    }
    sorted.sort_by(f64::total_cmp);
    Some(Summary {
        median: quantile(&sorted, 0.5),
        p10: quantile(&sorted, 0.1),
        p90: quantile(&sorted, 0.9),
        samples: sorted.len(),
    })
}

/// Linear interpolation between closest ranks of a sorted, non-empty slice.
pub fn quantile(sorted: &[f64], q: f64) -> f64 {
    let rank = q.clamp(0.0, 1.0) * (sorted.len() - 1) as f64;
    let (low, high) = (rank.floor() as usize, rank.ceil() as usize);
    sorted[low] + (sorted[high] - sorted[low]) * (rank - low as f64)
}

impl Summary {
    /// (p90 − p10) / median: the width of the middle 80% relative to the
    /// typical value.
    pub fn relative_spread(&self) -> f64 {
        if self.median == 0.0 {
            0.0
        } else {
            (self.p90 - self.p10) / self.median
        }
    }

    /// Scales every figure (e.g. ns to cycles); the count is unchanged.
    pub fn scaled(&self, factor: f64) -> Summary {
        Summary {
            median: self.median * factor,
            p10: self.p10 * factor,
            p90: self.p90 * factor,
            ..*self
        }
    }
}

/// One sentence for all rows (`noun`: "configurations", "pairs") too noisy
/// to trust, naming the worst, rather than one sentence per row; and one
/// for the rows too thin to judge. Each names the flag that helps.
pub fn rows_spread_warning<'a>(noun: &str, rows: impl Iterator<Item = (String, &'a Summary)>) -> Vec<String> {
    let mut noisy: Vec<(String, f64)> = Vec::new();
    let mut total = 0;
    let mut thin = 0;
    for (name, summary) in rows {
        total += 1;
        if summary.samples < 3 {
            thin += 1;
        }
        let spread = summary.relative_spread();
        if spread > SPREAD_LIMIT {
            noisy.push((name, spread));
        }
    }
    let mut out = Vec::new();
    if let Some((name, spread)) = noisy.iter().max_by(|a, b| a.1.total_cmp(&b.1)) {
        out.push(format!(
            "{} of {total} {noun} spread wider than {:.0}% between p10 and p90 (worst: {name}, {:.0}%); \
             the machine was busy or is a noisy VM, so compare those with care or rerun with more --samples",
            noisy.len(),
            SPREAD_LIMIT * 100.0,
            spread * 100.0
        ));
    }
    if thin > 0 {
        out.push(format!(
            "{thin} of {total} {noun} have fewer than 3 samples, so their spread cannot be judged; rerun with \
             --samples 3 or more"
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn median_and_percentiles_of_known_values() {
        let s = summarize(&[5.0, 1.0, 3.0, 2.0, 4.0]).unwrap();
        assert_eq!(s.median, 3.0);
        assert!((s.p10 - 1.4).abs() < 1e-9);
        assert!((s.p90 - 4.6).abs() < 1e-9);
        assert_eq!(s.samples, 5);
        assert_eq!(summarize(&[7.0]).unwrap().median, 7.0);
        assert_eq!(summarize(&[]), None);
        assert_eq!(summarize(&[f64::NAN]), None);
    }

    proptest! {
        #[test]
        fn percentiles_are_ordered_and_inside_the_data(values in prop::collection::vec(-1e6f64..1e6, 1..50)) {
            let s = summarize(&values).unwrap();
            let min = values.iter().copied().fold(f64::INFINITY, f64::min);
            let max = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            prop_assert!(min <= s.p10 && s.p10 <= s.median && s.median <= s.p90 && s.p90 <= max);
            prop_assert_eq!(s.samples, values.len());
        }
    }

    #[test]
    fn rows_spread_warning_names_the_worst_row_and_counts_thin_rows() {
        let tight = summarize(&[100.0, 101.0, 99.0, 100.0]).unwrap();
        let noisy = summarize(&[100.0, 200.0, 50.0, 100.0]).unwrap();
        let wilder = summarize(&[100.0, 400.0, 20.0, 100.0]).unwrap();
        let rows = vec![
            ("a".to_string(), &tight),
            ("b".to_string(), &noisy),
            ("c".to_string(), &wilder),
        ];
        let text = rows_spread_warning("pairs", rows.into_iter());
        assert_eq!(text.len(), 1, "{text:?}");
        assert!(text[0].starts_with("2 of 3 pairs spread wider than 20%"), "{text:?}");
        assert!(text[0].contains("worst: c,"), "{text:?}");
        assert!(text[0].ends_with("rerun with more --samples"), "{text:?}");
        assert!(rows_spread_warning("pairs", vec![("a".to_string(), &tight)].into_iter()).is_empty());
        let one = summarize(&[100.0]).unwrap();
        let text = rows_spread_warning(
            "pairs",
            vec![("a".to_string(), &one), ("b".to_string(), &tight)].into_iter(),
        );
        assert_eq!(
            text,
            ["1 of 2 pairs have fewer than 3 samples, so their spread cannot be judged; rerun with --samples 3 or more"]
        );
        // Noisy and thin rows at once: one line of each kind.
        let text = rows_spread_warning(
            "sizes",
            vec![
                ("a".to_string(), &one),
                ("b".to_string(), &wilder),
                ("c".to_string(), &noisy),
            ]
            .into_iter(),
        );
        assert_eq!(text.len(), 2, "{text:?}");
        assert!(text[0].starts_with("2 of 3 sizes spread wider"), "{text:?}");
        assert!(
            text[1].starts_with("1 of 3 sizes have fewer than 3 samples"),
            "{text:?}"
        );
    }
}
