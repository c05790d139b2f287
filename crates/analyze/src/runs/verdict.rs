//! The verdict on a series of runs: one mode, two modes, or a possible
//! second mode that nothing observed explains.
//!
//! Two roads lead to "two modes":
//! 1. **The metric splits** (its best split is beyond what one normal mode
//!    gives 2% of the time, [`super::bimodal`]) **and an observed attribute
//!    explains the split** ([`super::explain`]). A split that nothing
//!    explains is only a *possible* second mode: on a busy host two slow
//!    runs out of eight are as likely noise as a mode, and the report says
//!    to run more.
//! 2. **An attribute fixed before the metric is looked at divides the runs
//!    into two groups whose metrics differ**: Welch's t-test on the
//!    analysed scale, which does not assume the groups share a spread, at
//!    2% overall (Bonferroni over every two-valued attribute tested), and
//!    the groups' means at least 3% apart. This finds the incident when the
//!    fast mode drifts so much that the metric alone cannot be split with
//!    confidence (8 runs, slow {2.75, 3.81, 3.82, 3.88}M, fast {6.44,
//!    7.63, 10.28, 10.49}M, every slow run started on node 1: Welch's p is
//!    0.001 where the best split's is about 0.2).

use std::collections::BTreeSet;

use serde::Serialize;

use super::attributes::{Attributes, RunAttribute};
use super::bimodal::{analysed_scale, min_cluster, ALPHA, RELATIVE_GAP_FLOOR};
use super::welch::welch;

/// What the runs show.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Verdict {
    OneMode,
    TwoModes,
    /// The metric splits, and no observed attribute explains the split.
    PossibleSecondMode,
}

impl Verdict {
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::OneMode => "one-mode",
            Verdict::TwoModes => "two-modes",
            Verdict::PossibleSecondMode => "possible-second-mode",
        }
    }
}

/// Road 2: the attribute whose two groups differ.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AttributeTest {
    pub attribute: RunAttribute,
    /// The value of the slow group, and of the fast one.
    pub slow_value: String,
    pub fast_value: String,
    pub t: f64,
    pub df: f64,
    pub p: f64,
    /// Two-valued attributes tested; each had to reach `ALPHA / tested`.
    pub tested: usize,
    /// Gap between the groups' means over the median, in the metric's units.
    pub relative_gap: f64,
    /// Whether the test ran on the logarithm of the metric.
    pub log_scale: bool,
}

/// Attributes known in every run with exactly two values, each held by
/// enough runs to be a cluster: `(name, values, run indices per value)`.
fn two_valued(attributes: &[Attributes], n: usize) -> Vec<(RunAttribute, [String; 2], [Vec<usize>; 2])> {
    let names: BTreeSet<RunAttribute> = attributes.iter().flat_map(|a| a.keys().copied()).collect();
    let mut found = Vec::new();
    for name in names {
        let values: Option<Vec<&String>> = (0..n).map(|i| attributes.get(i)?.get(&name)).collect();
        let Some(values) = values else { continue };
        let distinct: BTreeSet<&String> = values.iter().copied().collect();
        let [a, b] = distinct.into_iter().collect::<Vec<_>>()[..] else {
            continue;
        };
        let group = |v: &String| (0..n).filter(|i| values[*i] == v).collect::<Vec<usize>>();
        let groups = [group(a), group(b)];
        if groups.iter().all(|g| g.len() >= min_cluster(n)) {
            found.push((name, [a.clone(), b.clone()], groups));
        }
    }
    found
}

/// Road 2 over `metrics` (all finite): the best two-valued attribute whose
/// groups differ, and which runs are slow by it.
pub fn attribute_split(
    metrics: &[f64],
    attributes: &[Attributes],
    lower_is_better: bool,
) -> Option<(AttributeTest, Vec<bool>)> {
    let n = metrics.len();
    let (analysed, log_scale) = analysed_scale(metrics);
    let candidates = two_valued(attributes, n);
    let tested = candidates.len();
    let mut sorted = metrics.to_vec();
    sorted.sort_by(f64::total_cmp);
    let median = crate::stats::quantile(&sorted, 0.5).abs();
    let mut best: Option<(AttributeTest, Vec<bool>)> = None;
    for (name, values, groups) in candidates {
        let pick = |g: &[usize], of: &[f64]| g.iter().map(|i| of[*i]).collect::<Vec<f64>>();
        let Some(test) = welch(&pick(&groups[0], &analysed), &pick(&groups[1], &analysed)) else {
            continue;
        };
        let mean = |g: &[usize]| pick(g, metrics).iter().sum::<f64>() / g.len() as f64;
        let (m0, m1) = (mean(&groups[0]), mean(&groups[1]));
        let relative_gap = if median > 0.0 {
            (m1 - m0).abs() / median
        } else {
            f64::INFINITY
        };
        if test.p >= ALPHA / tested as f64 || relative_gap < RELATIVE_GAP_FLOOR {
            continue;
        }
        if best.as_ref().is_some_and(|(b, _)| b.p <= test.p) {
            continue;
        }
        // Group 0 is slow when its mean is the worse one.
        let zero_slow = (m0 < m1) != lower_is_better;
        let slow = if zero_slow { 0 } else { 1 };
        let mut is_slow = vec![false; n];
        groups[slow].iter().for_each(|i| is_slow[*i] = true);
        let found = AttributeTest {
            attribute: name,
            slow_value: values[slow].clone(),
            fast_value: values[1 - slow].clone(),
            t: test.t.abs(),
            df: test.df,
            p: test.p,
            tested,
            relative_gap,
            log_scale,
        };
        best = Some((found, is_slow));
    }
    best
}

/// The reason for a road-2 verdict, in plain words.
pub fn attribute_reason(test: &AttributeTest, split_separation: Option<f64>, critical: f64) -> String {
    let scale = if test.log_scale {
        "the log of the metric"
    } else {
        "the metric"
    };
    let alone = split_separation.map_or(String::new(), |t| {
        format!(
            "; the metric alone splits only by T = {t:.2} (≤ {critical:.2}), its modes' spreads too unequal to tell"
        )
    });
    format!(
        "two modes by {}: its two groups differ by {:.1}%, Welch's t = {:.2} on {scale} ({:.1} degrees of freedom), \
         p = {:.2e} < {:.0}% / {} attribute{} tested{alone}",
        test.attribute,
        test.relative_gap * 100.0,
        test.t,
        test.df,
        test.p,
        ALPHA * 100.0,
        test.tested,
        if test.tested == 1 { "" } else { "s" },
    )
}
