use super::*;

fn r(values: &[f64]) -> Readings {
    Readings::new(values.to_vec()).unwrap()
}

/// Issue 33's first run, on a busy host: moving all 69 pages took the rate
/// from {0.95, 1.50, 0.98}M to {2.51, 4.94, 2.30}M. The old rule asked for
/// a 325% change (both spreads, inflated by 1.50 and 4.94) and said
/// "no effect"; every reading after the move is above every one before.
#[test]
fn a_separated_step_changed_however_wide_its_spread() {
    let baseline = r(&[0.95e6, 1.50e6, 0.98e6]);
    let moved = r(&[2.51e6, 4.94e6, 2.30e6]);
    let c = changed(&baseline, &moved, 0.05, false);
    assert_eq!(c.evidence, Evidence::Changed, "{c:?}");
    assert!(c.significant && c.separated && c.pairs_beyond == 1.0, "{c:?}");
    assert!((c.relative - (2.51 - 0.98) / 0.98).abs() < 1e-9, "{c:?}");
    // Every reading had to clear 1.50M + 5% of 0.98M.
    assert!((c.threshold - (1.50 + 0.049 - 0.98) / 0.98).abs() < 1e-9, "{c:?}");
    // The same the other way: moving the page back home.
    let back = changed(&moved, &baseline, 0.05, false);
    assert!(back.separated && back.significant, "{back:?}");
}

/// Issue 33's second run: the half holding the hot page read
/// {1.74, 2.63, 1.43}M against {1.96, 1.85, 2.40}M during a noisy second.
/// That is neither separated nor like the baseline: more readings, not a
/// verdict.
#[test]
fn readings_on_both_sides_of_the_baseline_are_unsure() {
    let baseline = r(&[1.96e6, 1.85e6, 2.40e6]);
    let half = r(&[1.74e6, 2.63e6, 1.43e6]);
    let c = changed(&baseline, &half, 0.05, false);
    assert_eq!(c.evidence, Evidence::Unsure, "{c:?}");
    assert!(!c.significant && !c.separated, "{c:?}");
    assert!((c.pairs_beyond - 6.0 / 9.0).abs() < 1e-9, "{c:?}");
    // Had the noisy second ended, the next readings show the effect; the
    // two low readings keep them from separation, so the third batch
    // decides on the share: 7 of 9 readings above every baseline one.
    let more = half.extended(&r(&[5.9e6, 6.1e6, 6.0e6]));
    assert_eq!(changed(&baseline, &more, 0.05, false).evidence, Evidence::Unsure);
    let most = more.extended(&r(&[6.0e6, 5.8e6, 6.2e6]));
    let c = changed(&baseline, &most, 0.05, true);
    assert!(
        c.significant && !c.separated && c.pairs_beyond >= FINAL_PAIRS_MIN,
        "{c:?}"
    );
    assert!((c.pairs_beyond - 7.0 / 9.0).abs() < 1e-9, "{c:?}");
    // If it never settles, the last batch does not call it a change.
    let c = changed(&baseline, &half, 0.05, true);
    assert_eq!(c.evidence, Evidence::Unchanged, "{c:?}");
}

#[test]
fn separation_must_clear_min_change() {
    let baseline = r(&[100.0, 100.0, 100.0]);
    let small = r(&[104.0, 104.0, 104.0]);
    assert_eq!(changed(&baseline, &small, 0.05, false).evidence, Evidence::Unchanged);
    assert_eq!(changed(&baseline, &small, 0.01, false).evidence, Evidence::Changed);
    // A tie with a baseline reading is never beyond it.
    let touching = r(&[105.0, 110.0, 110.0]);
    let c = changed(&baseline, &touching, 0.05, false);
    assert!(!c.separated && c.evidence == Evidence::Unsure, "{c:?}");
}

/// One outlier among the step's readings keeps them from being separated,
/// but moves the share of pairs by one reading's worth: after the last
/// batch the step still counts.
#[test]
fn one_outlier_does_not_hide_a_change() {
    let baseline = r(&[100.0, 97.0, 103.0, 99.0, 101.0, 98.0, 102.0, 100.0, 99.0]);
    let moved = r(&[150.0, 148.0, 152.0, 95.0, 151.0, 149.0, 150.0, 153.0, 147.0]);
    let early = changed(&baseline, &moved, 0.05, false);
    assert_eq!(early.evidence, Evidence::Unsure, "{early:?}");
    let last = changed(&baseline, &moved, 0.05, true);
    assert!(last.significant && !last.separated, "{last:?}");
    assert!((last.pairs_beyond - 8.0 / 9.0).abs() < 1e-9, "{last:?}");
    // And one outlier in the baseline neither.
    let outlier_base = baseline.extended(&r(&[160.0]));
    let c = changed(&outlier_base, &moved, 0.05, true);
    assert!(c.significant, "{c:?}");
}

/// Readings that agree exactly (a rate file read within its update
/// period) against a baseline spread over 6%: ordinary noise is not a
/// change, even with a step spread of 0.
#[test]
fn identical_readings_inside_the_noise_are_not_a_change() {
    let baseline = r(&[100.0, 94.0, 97.0]);
    let step = r(&[90.0, 90.0, 90.0]);
    assert_eq!(changed(&baseline, &step, 0.05, false).evidence, Evidence::Unsure);
    assert_eq!(changed(&baseline, &step, 0.05, true).evidence, Evidence::Unchanged);
    // A real halving still counts at once.
    assert!(changed(&baseline, &r(&[50.0, 50.0, 50.0]), 0.05, false).separated);
}

#[test]
fn readings_like_the_baseline_are_unchanged_at_once() {
    let baseline = r(&[80.0, 90.0, 100.0]);
    let same = r(&[85.0, 95.0, 90.0]);
    let c = changed(&baseline, &same, 0.05, false);
    assert_eq!(c.evidence, Evidence::Unchanged, "{c:?}");
    assert!(c.pairs_beyond <= UNCHANGED_PAIRS_MAX, "{c:?}");
}

#[test]
fn a_zero_baseline_has_no_margin() {
    let zero = r(&[0.0]);
    assert!(changed(&zero, &r(&[1.0]), 0.05, false).significant);
    assert!(changed(&zero, &r(&[-1.0]), 0.05, false).significant);
    let c = changed(&zero, &zero, 0.05, false);
    assert_eq!((c.evidence, c.relative, c.threshold), (Evidence::Unchanged, 0.0, 0.0));
}
