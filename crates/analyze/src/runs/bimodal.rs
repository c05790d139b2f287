//! Does a benchmark's metric split into two clusters across runs? A
//! stated, tested method. (Whether the split is *two modes* also takes an
//! attribute that explains it; see [`super::verdict`].)
//!
//! 0. **Scale.** A metric that is positive in every run is analysed as its
//!    logarithm: throughput and time modes differ by ratios, and a mode's
//!    noise grows with its level, so on the log scale a drifting fast mode
//!    no longer swamps a tight slow one.
//! 1. **Best two-cluster split.** Sort the values and take the cut that
//!    minimises the within-cluster sum of squares (Otsu's / Jenks' optimal
//!    1-D split; on sorted data the optimum is always one contiguous cut).
//!    Both sides must hold at least [`MIN_CLUSTER_RUNS`] runs and
//!    [`MIN_CLUSTER_FRACTION`] of them, so one outlier is never a "mode".
//! 2. **Separation.** `T = (mean_high − mean_low) / (sd_low + sd_high)`:
//!    the gap between the clusters against each cluster's *own* standard
//!    deviation. A pooled deviation let the spread of a drifting mode hide
//!    the gap between modes; here a tight cluster keeps its own scale. The
//!    median absolute deviation, tried first, cost 35–40 points of power
//!    with clusters of 3–6 runs (docs/runs.md), so each cluster's standard
//!    deviation is used. `T` does not change with location or scale, so
//!    its distribution when the data are one normal mode depends on `n`
//!    only.
//! 3. **Null calibration.** That distribution is simulated (fixed seed,
//!    [`NULL_SAMPLES`] normal samples of the same `n`, the same split
//!    rule), and the metric is called bimodal only when its `d` exceeds the
//!    `1 − ALPHA` quantile: a normal unimodal sample is called bimodal in
//!    about `ALPHA` of cases, whatever `n`.
//! 4. **Practical floor.** The cluster means must also differ by at least
//!    [`RELATIVE_GAP_FLOOR`] of the median, so a statistically clean split
//!    of 0.1% jitter is not reported as two modes.
//!
//! The simulated error rates are in `docs/runs.md` and pinned by the tests.

use serde::Serialize;

use super::verdict::{AttributeTest, Verdict};

/// Fewer runs cannot hold two clusters of [`MIN_CLUSTER_RUNS`].
pub const MIN_RUNS: usize = 4;
/// A mode seen once is an outlier, not a mode.
pub const MIN_CLUSTER_RUNS: usize = 2;
/// A mode must hold this share of the runs (rounded up). Allowing smaller
/// clusters lets the null's best split chase its own tails, which raises
/// the critical separation and cost 1–4 points of power in the
/// simulations (docs/runs.md).
pub const MIN_CLUSTER_FRACTION: f64 = 0.2;
/// The false-positive rate the null calibration aims at. At 1% the
/// 12-run, 6+6, 20%-apart case was found in only 94% of seeds; 2% finds it
/// in 98% and keeps false positives well under the 5% we promise.
pub const ALPHA: f64 = 0.02;
/// Normal samples simulated per `n` to find the critical separation; the
/// 98th percentile then rests on 40 tail samples.
pub const NULL_SAMPLES: usize = 2000;
/// Cluster means closer than this share of the median are one mode in
/// practice, however clean the split.
pub const RELATIVE_GAP_FLOOR: f64 = 0.03;
/// Fixed, so the verdict on the same values never changes between runs.
const NULL_SEED: u64 = 0x6e75_6d61_736c_6575;

/// The best split of a sample, in terms of sorted positions.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Split {
    /// Indices (into the caller's slice) of the low and high clusters.
    pub low: Vec<usize>,
    pub high: Vec<usize>,
    /// Cluster means in the metric's own units.
    pub low_mean: f64,
    pub high_mean: f64,
    /// Whether the split was made on the logarithm of the metric.
    pub log_scale: bool,
    /// Each cluster's standard deviation on the analysed scale.
    pub low_sd: f64,
    pub high_sd: f64,
    /// `(high − low) / (low_sd + high_sd)` of the analysed means; infinite
    /// when both clusters are constant and differ.
    pub separation: f64,
    /// `(high_mean − low_mean) / |median|`.
    pub relative_gap: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Bimodality {
    /// The verdict is two modes. From [`judge`] alone: the split is beyond
    /// the null; [`super::analyze`] then asks for an explanation.
    pub bimodal: bool,
    /// The best split is beyond what one normal mode gives `ALPHA` of the
    /// time (and the clusters are `RELATIVE_GAP_FLOOR` apart).
    pub split_significant: bool,
    pub verdict: Verdict,
    /// When an attribute's two groups made the verdict (road 2 of
    /// [`super::verdict`]).
    pub attribute_test: Option<AttributeTest>,
    pub runs: usize,
    pub split: Option<Split>,
    /// The separation a unimodal normal sample of this size exceeds with
    /// probability `ALPHA`.
    pub critical_separation: f64,
    /// Why the verdict is what it is, in plain words.
    pub reason: String,
}

/// The smallest cluster allowed for `n` runs.
pub fn min_cluster(n: usize) -> usize {
    MIN_CLUSTER_RUNS.max((MIN_CLUSTER_FRACTION * n as f64).ceil() as usize)
}

/// Cluster statistics of a sorted sample cut before position `k`.
struct Cut {
    k: usize,
    ssw: f64,
    low_mean: f64,
    high_mean: f64,
    /// Each side's sum of squared deviations.
    low_ss: f64,
    high_ss: f64,
}

/// The within-cluster-SS-minimising cut of `sorted` with both sides at
/// least `min` long, from prefix sums (shifted by the first value so large
/// metrics lose no precision). `None` when no cut is allowed.
fn best_cut(sorted: &[f64], min: usize) -> Option<Cut> {
    let n = sorted.len();
    if n < 2 * min || min == 0 {
        return None;
    }
    let shift = sorted[0];
    let (mut sum, mut sq) = (vec![0.0; n + 1], vec![0.0; n + 1]);
    for (i, v) in sorted.iter().enumerate() {
        let x = v - shift;
        sum[i + 1] = sum[i] + x;
        sq[i + 1] = sq[i] + x * x;
    }
    let ss = |a: usize, b: usize| {
        let (s, q, m) = (sum[b] - sum[a], sq[b] - sq[a], (b - a) as f64);
        (q - s * s / m).max(0.0)
    };
    (min..=n - min)
        .map(|k| Cut {
            k,
            ssw: ss(0, k) + ss(k, n),
            low_mean: shift + sum[k] / k as f64,
            high_mean: shift + (sum[n] - sum[k]) / (n - k) as f64,
            low_ss: ss(0, k),
            high_ss: ss(k, n),
        })
        .min_by(|a, b| a.ssw.total_cmp(&b.ssw))
}

/// Each side's standard deviation (n − 1 in the denominator).
fn sds(cut: &Cut, n: usize) -> (f64, f64) {
    let sd = |ss: f64, m: usize| (ss / (m - 1) as f64).sqrt();
    (sd(cut.low_ss, cut.k), sd(cut.high_ss, n - cut.k))
}

fn separation_of(cut: &Cut, n: usize) -> f64 {
    let gap = cut.high_mean - cut.low_mean;
    let (low, high) = sds(cut, n);
    // A spread below the arithmetic's resolution is no spread: equal
    // values that differ by rounding must not make an infinite gap finite.
    let spread = low + high;
    if spread > 1e-12 * cut.high_mean.abs().max(cut.low_mean.abs()) {
        gap / spread
    } else if gap > 0.0 {
        f64::INFINITY
    } else {
        0.0
    }
}

/// The values as analysed: their logarithms when every one is positive
/// (and finite), else themselves.
pub fn analysed_scale(values: &[f64]) -> (Vec<f64>, bool) {
    if values.iter().all(|v| *v > 0.0 && v.is_finite()) {
        (values.iter().map(|v| v.ln()).collect(), true)
    } else {
        (values.to_vec(), false)
    }
}

/// The best split of `values` (any order, all finite), or `None` when
/// there are too few to split.
pub fn best_split(values: &[f64]) -> Option<Split> {
    let n = values.len();
    let (analysed, log_scale) = analysed_scale(values);
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by(|a, b| analysed[*a].total_cmp(&analysed[*b]));
    let sorted: Vec<f64> = order.iter().map(|i| analysed[*i]).collect();
    let cut = best_cut(&sorted, min_cluster(n))?;
    let mean = |indices: &[usize]| indices.iter().map(|i| values[*i]).sum::<f64>() / indices.len() as f64;
    let (low, high) = (order[..cut.k].to_vec(), order[cut.k..].to_vec());
    let (low_mean, high_mean) = (mean(&low), mean(&high));
    let mut original: Vec<f64> = values.to_vec();
    original.sort_by(f64::total_cmp);
    let median = crate::stats::quantile(&original, 0.5).abs();
    let gap = high_mean - low_mean;
    let (low_sd, high_sd) = sds(&cut, n);
    Some(Split {
        low,
        high,
        low_mean,
        high_mean,
        log_scale,
        low_sd,
        high_sd,
        separation: separation_of(&cut, n),
        relative_gap: if median > 0.0 { gap / median } else { f64::INFINITY },
    })
}

/// The `1 − ALPHA` quantile of the best-split separation of `n` standard
/// normal values (one normal mode on the analysed scale), by simulation
/// with a fixed seed (so it is the same on every call). About `NULL_SAMPLES × n log n` work: milliseconds for
/// `n` in the hundreds.
pub fn critical_separation(n: usize) -> f64 {
    let min = min_cluster(n);
    if n < 2 * min {
        return f64::INFINITY;
    }
    let mut normal = Normal::new(NULL_SEED ^ n as u64);
    let mut sample = vec![0.0; n];
    let mut separations: Vec<f64> = (0..NULL_SAMPLES)
        .map(|_| {
            sample.iter_mut().for_each(|v| *v = normal.draw());
            sample.sort_by(f64::total_cmp);
            best_cut(&sample, min).map_or(0.0, |cut| separation_of(&cut, n))
        })
        .collect();
    separations.sort_by(f64::total_cmp);
    crate::stats::quantile(&separations, 1.0 - ALPHA)
}

/// The verdict on `values`, calibrated for their count.
pub fn judge(values: &[f64]) -> Bimodality {
    judge_with(values, critical_separation(values.len()))
}

/// The verdict against a given critical separation (tests reuse one per
/// `n` instead of simulating the null again for every sample).
pub fn judge_with(values: &[f64], critical_separation: f64) -> Bimodality {
    let runs = values.len();
    let verdict = |bimodal: bool, split, reason: String| Bimodality {
        bimodal,
        split_significant: bimodal,
        verdict: if bimodal { Verdict::TwoModes } else { Verdict::OneMode },
        attribute_test: None,
        runs,
        split,
        critical_separation,
        reason,
    };
    if runs < MIN_RUNS {
        return verdict(
            false,
            None,
            format!("{runs} runs are too few to judge: at least {MIN_RUNS} are needed"),
        );
    }
    if values.iter().any(|v| !v.is_finite()) {
        return verdict(false, None, "a metric is not a finite number".into());
    }
    let Some(split) = best_split(values) else {
        return verdict(false, None, "too few runs for two clusters".into());
    };
    let (d, gap) = (split.separation, split.relative_gap);
    if d <= critical_separation {
        let reason = format!(
            "one mode: the best split separates by T = {d:.2}, within what one normal mode gives {:.0}% of the time (T ≤ {critical_separation:.2})",
            ALPHA * 100.0
        );
        return verdict(false, Some(split), reason);
    }
    if gap < RELATIVE_GAP_FLOOR {
        let reason = format!(
            "one mode in practice: the clusters are distinct (T = {d:.2}) but only {:.1}% apart, under the {:.0}% floor",
            gap * 100.0,
            RELATIVE_GAP_FLOOR * 100.0
        );
        return verdict(false, Some(split), reason);
    }
    let reason = format!(
        "two clusters: T = {} > {critical_separation:.2} (one normal mode exceeds that {:.0}% of the time), means {:.1}% apart",
        if d.is_finite() { format!("{d:.2}") } else { "∞".into() },
        ALPHA * 100.0,
        gap * 100.0
    );
    verdict(true, Some(split), reason)
}

/// Standard normal draws: SplitMix64 into Box–Muller. Only for the null
/// simulation; reproducible from its seed.
pub struct Normal {
    state: u64,
    spare: Option<f64>,
}

impl Normal {
    pub fn new(seed: u64) -> Self {
        Normal {
            state: seed,
            spare: None,
        }
    }

    fn uniform(&mut self) -> f64 {
        self.state = self.state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^= z >> 31;
        // 53 random bits in (0, 1]: never 0, so ln() is finite.
        ((z >> 11) + 1) as f64 / (1u64 << 53) as f64
    }

    pub fn draw(&mut self) -> f64 {
        if let Some(v) = self.spare.take() {
            return v;
        }
        let (u1, u2) = (self.uniform(), self.uniform());
        let r = (-2.0 * u1.ln()).sqrt();
        let theta = std::f64::consts::TAU * u2;
        self.spare = Some(r * theta.sin());
        r * theta.cos()
    }
}
