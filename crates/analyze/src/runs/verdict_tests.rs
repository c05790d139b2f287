//! The verdict on the two recorded series, on a split nothing
//! explains, and on a grid of drifting-noise series; rates by simulation
//! over fixed seeds (printed with `--nocapture`, quoted in docs/runs.md).

use super::attributes::{Attributes, RunAttribute};

use super::bimodal::Normal;
use super::*;

/// Runs started alternately on node 0 and node 1 (`--start-cpus spread`
/// on a two-node machine with one CPU per node shown), with the start CPU
/// following the node.
fn alternating(n: usize) -> Vec<Attributes> {
    (0..n)
        .map(|i| {
            let node = (i % 2).to_string();
            Attributes::from([
                (RunAttribute::StartNode, node.clone()),
                (RunAttribute::StartCpu, (2 * (i % 2)).to_string()),
                (RunAttribute::ExitCode, "0".to_string()),
            ])
        })
        .collect()
}

/// The first series: `runs -n 8 --start-cpus spread
/// --release-after 300ms` in a two-node guest on a busy host. Every slow
/// run started on node 1; the fast runs drifted from 6.44M to 10.49M.
/// The order of the runs within each mode is not in the issue; here the
/// fast ones rise with time, as a drift does.
const DRIFTING_INCIDENT: [f64; 8] = [6.44e6, 2.75e6, 7.63e6, 3.81e6, 10.28e6, 3.82e6, 10.49e6, 3.88e6];

/// The control: two slow runs (9.11M, 8.23M) against six of
/// 10.4–10.9M, one slow run on each node, so nothing observed explains
/// them. The six fast values are spread over the range.
const CONTROL: [f64; 8] = [10.4e6, 10.6e6, 9.11e6, 10.9e6, 10.5e6, 8.23e6, 10.7e6, 10.8e6];

#[test]
fn the_drifting_incident_is_two_modes_explained_by_the_start_node() {
    let analysis = analyze(&DRIFTING_INCIDENT, &alternating(8), false);
    let b = &analysis.bimodality;
    assert_eq!((b.bimodal, b.verdict), (true, Verdict::TwoModes), "{}", b.reason);
    assert_eq!(analysis.cluster(Label::Slow).unwrap().runs, [1, 3, 5, 7]);
    let test = b.attribute_test.as_ref().expect("the start node's groups decide");
    assert!(
        [RunAttribute::StartNode, RunAttribute::StartCpu].contains(&test.attribute),
        "{test:?}"
    );
    assert!(test.p < 0.002, "{test:?}");
    let best = &analysis.explanations[0];
    assert_eq!((best.attribute, best.separation), (RunAttribute::StartNode, 1.0));
    assert_eq!(best.slow_values, ["1"]);
    assert!(b.reason.starts_with("two modes by start_"), "{}", b.reason);
}

#[test]
fn the_control_is_not_two_modes() {
    let analysis = analyze(&CONTROL, &alternating(8), false);
    let b = &analysis.bimodality;
    assert!(!b.bimodal, "{}", b.reason);
    assert_ne!(b.verdict, Verdict::TwoModes);
    assert!(b.attribute_test.is_none());
}

#[test]
fn a_clean_split_nothing_explains_is_a_possible_second_mode() {
    // Six runs near 100, six near 70, three of each on each node.
    let metrics = [
        100.0, 70.0, 70.5, 99.0, 101.0, 71.0, 69.5, 100.5, 99.5, 70.2, 71.2, 100.2,
    ];
    let analysis = analyze(&metrics, &alternating(12), false);
    let b = &analysis.bimodality;
    assert!(b.split_significant, "{}", b.reason);
    assert_eq!((b.bimodal, b.verdict), (false, Verdict::PossibleSecondMode));
    assert!(
        b.reason
            .starts_with("a possible second mode, explained by nothing here: rerun with more runs"),
        "{}",
        b.reason
    );
    // The split is still shown, so the runs can be looked at.
    assert_eq!(analysis.cluster(Label::Slow).unwrap().runs, [1, 2, 5, 6, 9, 10]);
    // The same split with the slow runs all on node 1 is two modes.
    let mut attributes = alternating(12);
    for (i, a) in attributes.iter_mut().enumerate() {
        let slow = [1, 2, 5, 6, 9, 10].contains(&i);
        a.insert(RunAttribute::BssNode, if slow { "1" } else { "0" }.into());
    }
    let explained = analyze(&metrics, &attributes, false);
    assert_eq!(explained.bimodality.verdict, Verdict::TwoModes);
    assert!(
        explained.bimodality.reason.starts_with("two modes: T = "),
        "{}",
        explained.bimodality.reason
    );
}

/// `n` runs of one mode whose noise grows from `sd_from` to `sd_to`
/// (relative) and whose level falls by `fall` over the series: a host
/// getting busier.
fn drifting(seed: u64, n: usize, (sd_from, sd_to, fall): (f64, f64, f64)) -> Vec<f64> {
    let mut normal = Normal::new(seed.wrapping_mul(0x5851_F42D_4C95_7F2D) ^ 0x000d_21f7);
    (0..n)
        .map(|i| {
            let f = i as f64 / (n - 1) as f64;
            100.0 * (1.0 - fall * f) * (1.0 + (sd_from + (sd_to - sd_from) * f) * normal.draw())
        })
        .collect()
}

const SEEDS: u64 = 1000;

fn verdict_rates(sample: impl Fn(u64) -> Vec<f64>, attributes: &[Attributes]) -> (f64, f64) {
    let (mut two, mut possible) = (0, 0);
    let critical = super::bimodal::critical_separation(attributes.len());
    for seed in 0..SEEDS {
        match analyze_with(&sample(seed), attributes, false, critical)
            .bimodality
            .verdict
        {
            Verdict::TwoModes => two += 1,
            Verdict::PossibleSecondMode => possible += 1,
            Verdict::OneMode => {}
        }
    }
    (two as f64 / SEEDS as f64, possible as f64 / SEEDS as f64)
}

/// One mode whose noise and level drift, started alternately on two
/// nodes: never called two modes more than 3% of the time, and a possible
/// second mode at most 10%.
#[test]
fn drifting_noise_is_not_two_modes() {
    for n in [8, 12, 30] {
        for drift in [
            (0.01, 0.08, 0.0),
            (0.02, 0.02, 0.15),
            (0.01, 0.06, 0.10),
            (0.01, 0.08, 0.10),
        ] {
            let (two, possible) = verdict_rates(|seed| drifting(seed, n, drift), &alternating(n));
            println!(
                "one drifting mode, n = {n}, sd {:.0}%→{:.0}%, level −{:.0}%: two modes {:.1}%, possible {:.1}%",
                drift.0 * 100.0,
                drift.1 * 100.0,
                drift.2 * 100.0,
                two * 100.0,
                possible * 100.0
            );
            assert!(two <= 0.03, "n = {n}, {drift:?}: two modes in {two}");
            assert!(possible <= 0.10, "n = {n}, {drift:?}: possible in {possible}");
        }
    }
}

/// Two modes on alternating nodes where the fast mode's noise drifts up
/// to 15%: the incident's shape (slow at 42% of fast), found in at least
/// 95% of seeds; two modes only 20% apart in at least 90%.
#[test]
fn two_modes_with_a_drifting_fast_mode_are_found() {
    for n in [8, 12] {
        for (fast_sd, ratio) in [(0.02, 0.42), (0.08, 0.42), (0.15, 0.42), (0.05, 0.8)] {
            let sample = |seed: u64| {
                let mut normal = Normal::new(seed ^ 0x7777);
                (0..n)
                    .map(|i| match i % 2 {
                        0 => 100.0 * (1.0 + fast_sd * normal.draw()),
                        _ => 100.0 * ratio * (1.0 + 0.02 * normal.draw()),
                    })
                    .collect::<Vec<f64>>()
            };
            let (two, _) = verdict_rates(sample, &alternating(n));
            println!(
                "two modes on alternating nodes, n = {n}, fast noise {:.0}%, slow at {:.0}%: found {:.1}%",
                fast_sd * 100.0,
                ratio * 100.0,
                two * 100.0
            );
            let floor = if ratio < 0.5 { 0.95 } else { 0.90 };
            assert!(two >= floor, "n = {n}, {fast_sd} {ratio}: {two}");
        }
    }
}

/// One normal mode with alternating nodes: the attribute road adds little
/// to the 2% the split allows.
#[test]
fn one_normal_mode_on_alternating_nodes_is_rarely_two_modes() {
    for n in [6, 8, 12, 30] {
        let sample = |seed: u64| {
            let mut normal = Normal::new(seed.wrapping_mul(0x2545_F491_4F6C_DD1D) ^ 0xdead_beef);
            (0..n).map(|_| 100.0 + 3.0 * normal.draw()).collect::<Vec<f64>>()
        };
        let (two, possible) = verdict_rates(sample, &alternating(n));
        println!(
            "one normal mode, n = {n}, alternating nodes: two modes {:.1}%, possible {:.1}%",
            two * 100.0,
            possible * 100.0
        );
        assert!(two <= 0.03, "n = {n}: {two}");
    }
}
