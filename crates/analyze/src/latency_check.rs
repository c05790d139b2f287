//! The self-check on a latency figure: one cheap chase at twice the working
//! set. Past the caches and the TLB's reach, latency stops growing with
//! the buffer, so the two agree; when they differ by more than
//! [`FLAT_TOLERANCE`], the curve has not flattened yet and the figure still
//! carries cache hits, TLB reach or the page size.
//!
//! A difference beyond the tolerance while the two figures' p10–p90 ranges
//! overlap is noise as much as a curve, so it is called inconclusive rather
//! than blamed on the caches.
//!
//! The check cannot see a plateau that both sizes sit on (on the issue's
//! server latency was flat from 16 MiB to 512 MiB, inside a 300 MiB L3 and
//! its neighbours, and rose only at 1 GiB): that is what sizing from the
//! caches ([`crate::working_set`]) is for. The two together catch both.

use numasleuth_model::units::bytes;
use serde::Serialize;

use crate::stats::Summary;

/// The probe chases this many times the working set.
pub const PROBE_FACTOR: u64 = 2;
/// A relative difference above this means the curve has not flattened.
pub const FLAT_TOLERANCE: f64 = 0.10;

/// What the self-check concluded; serialised as `flattened`,
/// `not-flattened` or `inconclusive`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum CurveVerdict {
    /// The two agree within the tolerance.
    Flattened,
    /// They differ by more than the tolerance and their p10–p90 ranges
    /// are apart.
    NotFlattened,
    /// They differ, but their ranges overlap: a noisy machine.
    Inconclusive,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CurveCheck {
    pub size_bytes: u64,
    /// The median of the figure being checked.
    pub latency_ns: f64,
    pub probe_size_bytes: u64,
    pub probe_latency_ns: f64,
    /// `(probe − figure) / figure`.
    pub difference: f64,
    /// Whether the two agree within [`FLAT_TOLERANCE`].
    pub flattened: bool,
    pub verdict: CurveVerdict,
    /// For people: what was compared and what it means.
    pub message: String,
}

/// A sweep to suggest around `size_bytes`: an eighth of it to the probe's
/// size, in powers of two, in `mem latency --sizes` syntax.
fn suggested_sweep(size_bytes: u64) -> String {
    let short = |b: u64| {
        let (value, unit) = if b >= 1 << 30 && b.is_multiple_of(1 << 30) {
            (b >> 30, "G")
        } else if b >= 1 << 20 {
            (b.div_ceil(1 << 20), "M")
        } else {
            (b.div_ceil(1 << 10).max(4), "K")
        };
        format!("{value}{unit}")
    };
    let low = (size_bytes / 8).max(4096).next_power_of_two();
    let high = size_bytes.saturating_mul(PROBE_FACTOR).next_power_of_two();
    format!("{}..{}", short(low), short(high))
}

/// Compares the figure at `size_bytes` with the probe at twice the size.
pub fn check(size_bytes: u64, figure: &Summary, probe_size_bytes: u64, probe: &Summary) -> CurveCheck {
    let (latency_ns, probe_latency_ns) = (figure.median, probe.median);
    let difference = if latency_ns > 0.0 {
        (probe_latency_ns - latency_ns) / latency_ns
    } else {
        f64::INFINITY
    };
    let flattened = difference.abs() <= FLAT_TOLERANCE;
    let overlap = figure.p10.max(probe.p10) <= figure.p90.min(probe.p90);
    let verdict = match (flattened, overlap) {
        (true, _) => CurveVerdict::Flattened,
        (false, false) => CurveVerdict::NotFlattened,
        (false, true) => CurveVerdict::Inconclusive,
    };
    let compared = format!(
        "a chase over {} gives {probe_latency_ns:.1} ns against {latency_ns:.1} ns over {} ({:+.1}%",
        bytes(probe_size_bytes),
        bytes(size_bytes),
        difference * 100.0
    );
    let message = match verdict {
        CurveVerdict::Flattened => format!("self-check: {compared}): the curve has flattened"),
        CurveVerdict::Inconclusive => format!(
            "self-check inconclusive: {compared}), but their p10–p90 ranges ({:.1}–{:.1} and {:.1}–{:.1} ns) \
             overlap: the machine is too noisy to tell whether the curve has flattened; measure again on a quiet \
             machine",
            figure.p10, figure.p90, probe.p10, probe.p90
        ),
        CurveVerdict::NotFlattened => format!(
            "the latency curve has not flattened at {}: {compared}, more than {:.0}%); cache, TLB reach or the page \
             size still shape the figure. See where it flattens with `numasleuth mem latency --sizes {}`",
            bytes(size_bytes),
            FLAT_TOLERANCE * 100.0,
            suggested_sweep(size_bytes)
        ),
    };
    CurveCheck {
        size_bytes,
        latency_ns,
        probe_size_bytes,
        probe_latency_ns,
        difference,
        flattened,
        verdict,
        message,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MIB: u64 = 1 << 20;

    /// The issue's server (one Xeon, family 6 model 207, 300 MiB L3, one
    /// node): flat at 118–123 ns from 16 MiB to 512 MiB, 144–149 ns at
    /// 1–2 GiB. The points between are reconstructed from those ranges.
    const ISSUE_CURVE: [(u64, f64); 8] = [
        (16 * MIB, 118.0),
        (32 * MIB, 119.0),
        (64 * MIB, 120.0),
        (128 * MIB, 121.0),
        (256 * MIB, 122.0),
        (512 * MIB, 123.0),
        (1024 * MIB, 144.0),
        (2048 * MIB, 149.0),
    ];

    fn at(curve: &[(u64, f64)], size: u64) -> f64 {
        curve.iter().find(|(s, _)| *s == size).unwrap().1
    }

    /// A figure with the tight spread of a quiet machine (±1%).
    fn quiet(median: f64) -> Summary {
        Summary {
            median,
            p10: median * 0.99,
            p90: median * 1.01,
            samples: 7,
        }
    }

    fn check_on(curve: &[(u64, f64)], size: u64) -> CurveCheck {
        check(size, &quiet(at(curve, size)), 2 * size, &quiet(at(curve, 2 * size)))
    }

    #[test]
    fn the_issue_curve_has_not_flattened_at_512_mib_and_has_at_1_gib() {
        let early = check_on(&ISSUE_CURVE, 512 * MIB);
        assert!(!early.flattened, "{}", early.message);
        assert!((early.difference - 21.0 / 123.0).abs() < 1e-12);
        assert_eq!(early.verdict, CurveVerdict::NotFlattened);
        assert_eq!(
            early.message,
            "the latency curve has not flattened at 512 MiB: a chase over 1 GiB gives 144.0 ns against 123.0 ns \
             over 512 MiB (+17.1%, more than 10%); cache, TLB reach or the page size still shape the figure. See \
             where it flattens with `numasleuth mem latency --sizes 64M..1G`"
        );
        let late = check_on(&ISSUE_CURVE, 1024 * MIB);
        assert!(late.flattened, "{}", late.message);
        assert_eq!(late.verdict, CurveVerdict::Flattened);
        assert!(late.message.contains("+3.5%"), "{}", late.message);
    }

    /// Inside the plateau both sizes agree: the check alone would pass a
    /// 256 MiB figure that is an L3 figure. Sizing from the caches is what
    /// keeps the default off this plateau.
    #[test]
    fn a_plateau_under_both_sizes_is_not_caught_by_the_check_alone() {
        assert!(check_on(&ISSUE_CURVE, 256 * MIB).flattened);
        let rule = crate::working_set::choose(
            Some(crate::working_set::SizedFrom {
                cache: "L3".into(),
                bytes: 300 * MIB,
                cpus: "0-15".into(),
                factor: 4,
                count: 1,
            }),
            &[],
            1,
            None,
        );
        assert!(
            rule.working_set_bytes > 1024 * MIB,
            "the rule lands past the step at 1 GiB"
        );
    }

    /// Recorded 2026-11-26 with bench/chase.c (median of 7 samples of 20
    /// ms, CPU 0, transparent huge pages) on a 16-vCPU cloud VM of the
    /// issue's kind: one Intel Xeon package, a 300 MiB L3 over CPUs 0-15,
    /// 125 GiB, one node.
    const SERVER_CURVE: [(u64, f64); 10] = [
        (16 * MIB, 108.071),
        (32 * MIB, 113.436),
        (64 * MIB, 113.034),
        (128 * MIB, 113.209),
        (256 * MIB, 113.193),
        (512 * MIB, 112.158),
        (1024 * MIB, 115.864),
        (1536 * MIB, 119.814),
        (2048 * MIB, 122.587),
        (4096 * MIB, 120.106),
    ];

    /// On that server every doubling stays within 10%: the check passes
    /// wherever it is taken, and only the size rule keeps the figure off
    /// the L3-sized plateau (113 ns at 256 MiB against 122.6 ns at 2 GiB,
    /// 8% apart).
    #[test]
    fn the_recorded_server_curve_is_flat_within_the_tolerance_at_every_doubling() {
        for size in [16, 32, 64, 128, 256, 512, 1024, 2048].map(|m| m * MIB) {
            let c = check_on(&SERVER_CURVE, size);
            assert!(c.flattened, "{}", c.message);
        }
        let at_rule = check_on(&SERVER_CURVE, 1024 * MIB);
        assert!((at_rule.difference - (122.587 - 115.864) / 115.864).abs() < 1e-12);
        let plateau = at(&SERVER_CURVE, 256 * MIB) / at(&SERVER_CURVE, 2048 * MIB);
        assert!(plateau < 0.93, "{plateau}");
    }

    #[test]
    fn a_difference_either_way_beyond_10_percent_is_flagged() {
        // Falling too: a probe faster by more than 10% is as suspect.
        let falling = check(256 * MIB, &quiet(150.0), 512 * MIB, &quiet(120.0));
        assert_eq!(falling.verdict, CurveVerdict::NotFlattened);
        assert!(falling.message.contains("-20.0%"), "{}", falling.message);
        let exactly = check(100 * MIB, &quiet(100.0), 200 * MIB, &quiet(110.0));
        assert!(exactly.flattened, "10% is still flat");
        let zero = check(MIB, &quiet(0.0), 2 * MIB, &quiet(5.0));
        assert!(!zero.flattened);
    }

    /// Seen on this project's busy 2-CPU guest with a debug build: 548.5 ns
    /// [510.9–691.6] over 144 MiB, 393.0 ns over 288 MiB with a range that
    /// reaches into it. That is noise, not a curve.
    #[test]
    fn overlapping_ranges_make_a_difference_inconclusive() {
        let figure = Summary {
            median: 548.5,
            p10: 510.9,
            p90: 691.6,
            samples: 5,
        };
        let probe = Summary {
            median: 393.0,
            p10: 380.0,
            p90: 520.0,
            samples: 3,
        };
        let noisy = check(144 * MIB, &figure, 288 * MIB, &probe);
        assert_eq!((noisy.flattened, noisy.verdict), (false, CurveVerdict::Inconclusive));
        assert!(
            noisy.message.starts_with("self-check inconclusive"),
            "{}",
            noisy.message
        );
        // The same medians with ranges apart are a real difference.
        let apart = check(144 * MIB, &quiet(548.5), 288 * MIB, &quiet(393.0));
        assert_eq!(apart.verdict, CurveVerdict::NotFlattened);
    }

    #[test]
    fn the_suggested_sweep_brackets_the_size() {
        assert_eq!(suggested_sweep(1200 * MIB), "256M..4G");
        assert_eq!(suggested_sweep(144 * MIB), "32M..512M");
        assert_eq!(suggested_sweep(MIB), "128K..2M");
        assert_eq!(suggested_sweep(8192), "4K..16K");
    }
}
