//! The error rates the method promises, by simulation over 1000 seeds, plus
//! the edge cases. The rates printed with `--nocapture` are the ones quoted
//! in docs/runs.md.

use super::bimodal::*;

const SEEDS: u64 = 1000;

/// `n` draws of one normal mode: mean 100, sd 3 (the noise level the issue
/// asks the bimodal case to survive).
fn unimodal(seed: u64, n: usize) -> Vec<f64> {
    let mut normal = Normal::new(seed.wrapping_mul(0x2545_F491_4F6C_DD1D) ^ 0xdead_beef);
    (0..n).map(|_| 100.0 + 3.0 * normal.draw()).collect()
}

/// Two modes 20% apart (100 and 80), each with 3% noise relative to its
/// own mode, `slow` runs in the lower one.
fn two_modes(seed: u64, fast: usize, slow: usize) -> Vec<f64> {
    let mut normal = Normal::new(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ 0x1234_5678);
    let mut values: Vec<f64> = (0..fast).map(|_| 100.0 * (1.0 + 0.03 * normal.draw())).collect();
    values.extend((0..slow).map(|_| 80.0 * (1.0 + 0.03 * normal.draw())));
    values
}

fn rate(n: usize, sample: impl Fn(u64) -> Vec<f64>) -> f64 {
    let critical = critical_separation(n);
    let hits = (0..SEEDS)
        .filter(|seed| judge_with(&sample(*seed), critical).bimodal)
        .count();
    hits as f64 / SEEDS as f64
}

#[test]
fn one_normal_mode_is_called_bimodal_in_at_most_5_percent_of_seeds() {
    for n in [6, 12, 30, 100] {
        let false_positive = rate(n, |seed| unimodal(seed, n));
        println!(
            "unimodal normal, n = {n}: called bimodal in {:.1}% of {SEEDS} seeds",
            false_positive * 100.0
        );
        assert!(false_positive <= 0.05, "n = {n}: {false_positive}");
    }
}

#[test]
fn tiny_noise_is_never_split_however_clean() {
    // Same shape at 0.1% noise: the separation test alone would fire ~1%
    // of the time, the 3% floor never lets it through.
    let critical = critical_separation(12);
    for seed in 0..SEEDS {
        let values: Vec<f64> = unimodal(seed, 12).iter().map(|v| 100.0 + (v - 100.0) / 30.0).collect();
        assert!(!judge_with(&values, critical).bimodal, "seed {seed}: {values:?}");
    }
}

#[test]
fn two_modes_20_percent_apart_with_3_percent_noise_are_found_in_95_percent_of_seeds() {
    for (fast, slow) in [(6, 6), (8, 4), (4, 8), (15, 15)] {
        let n = fast + slow;
        let found = rate(n, |seed| two_modes(seed, fast, slow));
        println!(
            "two modes {fast}+{slow}: found in {:.1}% of {SEEDS} seeds",
            found * 100.0
        );
        assert!(found >= 0.95, "{fast}+{slow}: {found}");
    }
}

#[test]
fn the_found_split_is_the_true_one() {
    let critical = critical_separation(12);
    let mut exact = 0;
    for seed in 0..SEEDS {
        let values = two_modes(seed, 7, 5);
        let verdict = judge_with(&values, critical);
        let split = verdict.split.unwrap();
        let mut low = split.low.clone();
        low.sort_unstable();
        exact += usize::from(verdict.bimodal && low == vec![7, 8, 9, 10, 11]);
    }
    assert!(exact as u64 >= SEEDS * 95 / 100, "{exact}");
}

#[test]
fn critical_separation_is_reproducible_and_shrinks_with_n() {
    let (c12, c30, c100) = (
        critical_separation(12),
        critical_separation(30),
        critical_separation(100),
    );
    println!("critical d: n=12 {c12:.2}, n=30 {c30:.2}, n=100 {c100:.2}");
    assert_eq!(c12, critical_separation(12));
    assert!(c12 > c30 && c30 > c100, "{c12} {c30} {c100}");
    // A normal mode split at its median gives T ≈ 1.32 asymptotically
    // (half-normal means at ±0.798σ, each half's sd 0.603σ); the critical
    // value must sit above it.
    assert!(c100 > 1.32 && c12 < 20.0, "{c100} {c12}");
}

#[test]
fn edge_cases_are_verdicts_not_panics() {
    assert!(!judge(&[]).bimodal);
    assert!(!judge(&[1.0, 2.0, 3.0]).bimodal);
    assert!(judge(&[1.0, 2.0, 3.0]).reason.contains("too few"));
    assert!(!judge(&[5.0; 10]).bimodal);
    assert!(!judge(&[1.0, f64::NAN, 3.0, 4.0]).bimodal);
    // Two exact values, three runs each: infinitely separated, 100% apart.
    let exact = judge(&[10.0, 20.0, 10.0, 20.0, 10.0, 20.0]);
    assert!(exact.bimodal, "{}", exact.reason);
    assert_eq!(exact.split.unwrap().low, vec![0, 2, 4]);
    // A single outlier is not a mode (clusters need 2 runs).
    let outlier = judge(&[100.0, 101.0, 99.0, 100.5, 99.5, 100.2, 100.1, 10.0]);
    assert!(!outlier.bimodal || outlier.split.unwrap().low.len() >= 2);
    // Negative and zero-median metrics do not divide by zero.
    let _ = judge(&[-1.0, 1.0, -1.0, 1.0, 0.0, 0.0, 0.0]);
    // Huge values keep their precision (shifted prefix sums).
    let big: Vec<f64> = [0.0, 0.1, 0.0, 0.1, 50.0, 50.1, 50.0, 50.1]
        .iter()
        .map(|v| 1e12 + v)
        .collect();
    assert!(!judge(&big).bimodal, "50 in 1e12 is under the floor");
}
