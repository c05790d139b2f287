//! Welch's t-test: do two groups of runs, fixed in advance by an observed
//! attribute (the runs started on node 0 against those started on node 1),
//! differ in their metric? Welch's form does not assume the two groups
//! share a spread, which is the point: one mode may drift while the other
//! stays tight. The p-value comes from Student's t distribution through
//! the regularised incomplete beta function.

/// The test's outcome.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Welch {
    /// `(mean_b − mean_a) / sqrt(var_a/n_a + var_b/n_b)`; infinite when
    /// both groups are constant and differ.
    pub t: f64,
    /// Welch–Satterthwaite degrees of freedom.
    pub df: f64,
    /// Two-sided p-value.
    pub p: f64,
}

fn mean_var(values: &[f64]) -> (f64, f64) {
    let n = values.len() as f64;
    let mean = values.iter().sum::<f64>() / n;
    let var = values.iter().map(|v| (v - mean) * (v - mean)).sum::<f64>() / (n - 1.0);
    (mean, var)
}

/// Welch's test of `a` against `b`; `None` unless each has two or more
/// values and all are finite.
pub fn welch(a: &[f64], b: &[f64]) -> Option<Welch> {
    if a.len() < 2 || b.len() < 2 || a.iter().chain(b).any(|v| !v.is_finite()) {
        return None;
    }
    let ((ma, va), (mb, vb)) = (mean_var(a), mean_var(b));
    let (sa, sb) = (va / a.len() as f64, vb / b.len() as f64);
    let se2 = sa + sb;
    if se2 <= 0.0 {
        let differ = ma != mb;
        return Some(Welch {
            t: if differ { f64::INFINITY.copysign(mb - ma) } else { 0.0 },
            df: (a.len() + b.len() - 2) as f64,
            p: if differ { 0.0 } else { 1.0 },
        });
    }
    let t = (mb - ma) / se2.sqrt();
    let df = se2 * se2 / (sa * sa / (a.len() - 1) as f64 + sb * sb / (b.len() - 1) as f64);
    Some(Welch {
        t,
        df,
        p: two_sided_p(t, df),
    })
}

/// P(|T| ≥ |t|) for Student's t with `df` degrees of freedom.
pub fn two_sided_p(t: f64, df: f64) -> f64 {
    if !t.is_finite() {
        return 0.0;
    }
    incomplete_beta(df / 2.0, 0.5, df / (df + t * t)).clamp(0.0, 1.0)
}

/// ln Γ(x) for x > 0 (Lanczos, g = 7, nine terms: about 15 digits).
fn ln_gamma(x: f64) -> f64 {
    const G: [f64; 9] = [
        0.999_999_999_999_809_9,
        676.520_368_121_885_1,
        -1_259.139_216_722_402_8,
        771.323_428_777_653_1,
        -176.615_029_162_140_6,
        12.507_343_278_686_905,
        -0.138_571_095_265_720_12,
        9.984_369_578_019_572e-6,
        1.505_632_735_149_311_6e-7,
    ];
    if x < 0.5 {
        // Reflection keeps the series where it converges.
        let pi = std::f64::consts::PI;
        return (pi / (pi * x).sin()).ln() - ln_gamma(1.0 - x);
    }
    let x = x - 1.0;
    let mut sum = G[0];
    for (i, g) in G.iter().enumerate().skip(1) {
        sum += g / (x + i as f64);
    }
    let t = x + 7.5;
    0.5 * (2.0 * std::f64::consts::PI).ln() + (x + 0.5) * t.ln() - t + sum.ln()
}

/// The regularised incomplete beta function I_x(a, b), by its continued
/// fraction (modified Lentz), using the symmetry that keeps it converging.
fn incomplete_beta(a: f64, b: f64, x: f64) -> f64 {
    if x <= 0.0 {
        return 0.0;
    }
    if x >= 1.0 {
        return 1.0;
    }
    let front = (ln_gamma(a + b) - ln_gamma(a) - ln_gamma(b) + a * x.ln() + b * (1.0 - x).ln()).exp();
    if x < (a + 1.0) / (a + b + 2.0) {
        front * beta_fraction(a, b, x) / a
    } else {
        1.0 - front * beta_fraction(b, a, 1.0 - x) / b
    }
}

fn beta_fraction(a: f64, b: f64, x: f64) -> f64 {
    const TINY: f64 = 1e-300;
    let mut c = 1.0;
    let mut d = 1.0 - (a + b) * x / (a + 1.0);
    d = 1.0 / if d.abs() < TINY { TINY } else { d };
    let mut h = d;
    for m in 1..300 {
        let m = f64::from(m);
        let m2 = 2.0 * m;
        for numerator in [
            m * (b - m) * x / ((a + m2 - 1.0) * (a + m2)),
            -(a + m) * (a + b + m) * x / ((a + m2) * (a + m2 + 1.0)),
        ] {
            d = 1.0 + numerator * d;
            d = 1.0 / if d.abs() < TINY { TINY } else { d };
            c = 1.0 + numerator / c;
            c = if c.abs() < TINY { TINY } else { c };
            h *= d * c;
        }
        if (d * c - 1.0).abs() < 1e-15 {
            break;
        }
    }
    h
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64, tolerance: f64) -> bool {
        (a - b).abs() <= tolerance
    }

    /// Against published t-table values.
    #[test]
    fn student_t_matches_tables() {
        // t(0.975, 10) = 2.228, t(0.995, 4) = 4.604, t(0.99, 30) = 2.457.
        assert!(close(two_sided_p(2.228_138_85, 10.0), 0.05, 1e-6));
        assert!(close(two_sided_p(4.604_094_87, 4.0), 0.01, 1e-6));
        assert!(close(two_sided_p(2.457_261_26, 30.0), 0.02, 1e-6));
        // df = 1 is Cauchy: P(|T| ≥ 1) = 0.5.
        assert!(close(two_sided_p(1.0, 1.0), 0.5, 1e-12));
        assert_eq!(two_sided_p(0.0, 7.0), 1.0);
        assert_eq!(two_sided_p(f64::INFINITY, 7.0), 0.0);
        assert!(close(ln_gamma(5.0), 24f64.ln(), 1e-12));
        assert!(close(ln_gamma(0.5), std::f64::consts::PI.sqrt().ln(), 1e-12));
    }

    #[test]
    fn welch_on_unequal_spreads() {
        // The drifting series, on log values: slow {2.75, 3.81,
        // 3.82, 3.88}M against fast {6.44, 7.63, 10.28, 10.49}M.
        let slow: Vec<f64> = [2.75f64, 3.81, 3.82, 3.88].iter().map(|v| v.ln()).collect();
        let fast: Vec<f64> = [6.44f64, 7.63, 10.28, 10.49].iter().map(|v| v.ln()).collect();
        let w = welch(&slow, &fast).unwrap();
        assert!(close(w.t, 6.08, 0.01), "{w:?}");
        assert!((5.0..6.0).contains(&w.df), "{w:?}");
        assert!(w.p < 0.002, "{w:?}");
        // Identical groups: nothing to see.
        let same = welch(&[1.0, 2.0, 3.0], &[1.0, 2.0, 3.0]).unwrap();
        assert_eq!((same.t, same.p), (0.0, 1.0));
        // Constant groups that differ, and too few values.
        assert_eq!(welch(&[5.0, 5.0], &[7.0, 7.0]).unwrap().p, 0.0);
        assert!(welch(&[1.0], &[2.0, 3.0]).is_none());
        assert!(welch(&[1.0, f64::NAN], &[2.0, 3.0]).is_none());
    }
}
