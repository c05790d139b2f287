//! Where the latency curve flattens, from the size rule's working set up.
//!
//! Sizing from sysfs's caches is not enough on its own: a VM reports the
//! cache sizes its hypervisor chose (this project's guests say 32 MiB of
//! L3 on hosts with far more), and a chase over 4× a reported 32 MiB still
//! runs inside the real one. The self-check then warns, at 2× the size it
//! chose itself, that the curve has not flattened (+33% at 128 MiB on one
//! of our machines). So before the matrix, the working set is chased once
//! (a few samples), then at [`PROBE_FACTOR`]× it; while the larger chase is
//! slower by more than the tolerance with ranges apart, the size doubles,
//! at most [`GROWTH_STEPS_MAX`] times and only while the next chase fits in
//! every measured node's free memory. The last larger chase is the matrix's
//! self-check probe, so a flat curve costs one short chase more than before.
//!
//! Pure: the caller passes the chase (`measure`), so the rule is tested on
//! recorded curves.

use crate::latency_check::{check, CurveCheck, CurveVerdict, PROBE_FACTOR};
use crate::stats::Summary;

/// At most this many doublings past the rule's size (8× it): each one
/// allocates and touches twice the memory of the one before, and the
/// matrix is then measured at that size.
pub const GROWTH_STEPS_MAX: u32 = 3;

/// What the search found.
#[derive(Debug, Clone, PartialEq)]
pub struct FlatSearch {
    /// The size to measure at: the start, or where the curve flattened.
    pub size_bytes: u64,
    /// The chase at [`PROBE_FACTOR`]× `size_bytes`, when it ran: the
    /// self-check compares the matrix's figure with it.
    pub probe: Option<(u64, Summary)>,
    /// Each comparison made, smallest size first.
    pub checks: Vec<CurveCheck>,
    /// Why the search ended before a flat curve (a chase that does not fit
    /// or failed, or the last allowed doubling); `None` once it flattened
    /// or could not tell.
    pub stopped: Option<String>,
}

impl FlatSearch {
    /// Whether the size was raised above the start.
    pub fn grew(&self, start_bytes: u64) -> bool {
        self.size_bytes > start_bytes
    }
}

/// Rising by more than the tolerance with the two ranges apart: the
/// caches (or the TLB's reach) still shape the figure, so a larger size
/// measures something else. A falling or noisy pair is no reason to grow.
fn still_rising(c: &CurveCheck) -> bool {
    c.verdict == CurveVerdict::NotFlattened && c.difference > 0.0
}

/// Searches from `start_bytes`; a chase larger than `max_bytes` is never
/// asked for. `measure(size)` chases a buffer of `size` bytes; why it
/// failed becomes the reason the search stopped.
pub fn search<E: std::fmt::Display>(
    start_bytes: u64,
    max_bytes: u64,
    mut measure: impl FnMut(u64) -> Result<Summary, E>,
) -> FlatSearch {
    let mut found = FlatSearch {
        size_bytes: start_bytes,
        probe: None,
        checks: Vec::new(),
        stopped: None,
    };
    let mut at_size: Option<Summary> = None;
    for step in 0..=GROWTH_STEPS_MAX {
        let size = found.size_bytes;
        let probe_bytes = size.saturating_mul(PROBE_FACTOR);
        if probe_bytes > max_bytes {
            found.stopped = Some(format!(
                "a chase over {} does not fit in the free memory",
                numasleuth_model::units::bytes(probe_bytes)
            ));
            return found;
        }
        let figure = match at_size.take().map_or_else(|| measure(size), Ok) {
            Ok(s) => s,
            Err(why) => return stop(found, why.to_string()),
        };
        let probe = match measure(probe_bytes) {
            Ok(s) => s,
            Err(why) => return stop(found, why.to_string()),
        };
        let c = check(size, &figure, probe_bytes, &probe);
        let rising = still_rising(&c);
        found.checks.push(c);
        if !rising {
            found.probe = Some((probe_bytes, probe));
            return found;
        }
        if step == GROWTH_STEPS_MAX {
            found.probe = Some((probe_bytes, probe));
            found.stopped = Some(format!("still rising after {GROWTH_STEPS_MAX} doublings"));
            return found;
        }
        found.size_bytes = probe_bytes;
        at_size = Some(probe);
    }
    found
}

fn stop(mut found: FlatSearch, why: String) -> FlatSearch {
    found.stopped = Some(why);
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    const MIB: u64 = 1 << 20;

    fn quiet(median: f64) -> Summary {
        Summary {
            median,
            p10: median * 0.99,
            p90: median * 1.01,
            samples: 3,
        }
    }

    /// A size the search should not have asked for.
    #[derive(Debug)]
    struct Unasked(u64);

    impl std::fmt::Display for Unasked {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            write!(f, "asked for {}", self.0)
        }
    }

    /// A curve given as (size, ns); sizes it lacks are an error, so a test
    /// fails if the search asks for one it should not.
    fn on(curve: &[(u64, f64)]) -> impl FnMut(u64) -> Result<Summary, Unasked> + '_ {
        move |size| {
            curve
                .iter()
                .find(|(s, _)| *s == size)
                .map(|(_, ns)| quiet(*ns))
                .ok_or(Unasked(size))
        }
    }

    /// A VM reporting 32 MiB of L3 on a host whose real L3 is ~200 MiB:
    /// the rule's 128 MiB is 33% below 256 MiB, and 512 MiB agrees with
    /// 256 MiB within 10%.
    const VM_CURVE: [(u64, f64); 4] = [
        (128 * MIB, 90.0),
        (256 * MIB, 120.0),
        (512 * MIB, 128.0),
        (1024 * MIB, 130.0),
    ];

    #[test]
    fn a_rising_curve_doubles_the_size_until_it_flattens() {
        let found = search(128 * MIB, 4096 * MIB, on(&VM_CURVE));
        assert_eq!(found.size_bytes, 256 * MIB);
        assert_eq!(found.probe, Some((512 * MIB, quiet(128.0))));
        let verdicts: Vec<_> = found.checks.iter().map(|c| c.verdict).collect();
        assert_eq!(verdicts, [CurveVerdict::NotFlattened, CurveVerdict::Flattened]);
        assert_eq!(found.stopped, None);
        assert!(found.grew(128 * MIB));
    }

    #[test]
    fn a_flat_curve_keeps_the_start_and_its_probe_is_the_self_checks() {
        let flat = [(128 * MIB, 100.0), (256 * MIB, 104.0)];
        let found = search(128 * MIB, 4096 * MIB, on(&flat));
        assert_eq!((found.size_bytes, found.checks.len()), (128 * MIB, 1));
        assert_eq!(found.probe, Some((256 * MIB, quiet(104.0))));
        assert!(!found.grew(128 * MIB));
    }

    #[test]
    fn free_memory_bounds_the_growth_and_says_so() {
        // 256 MiB fits and rises above 128 MiB; a chase over 512 MiB
        // does not fit, so 256 MiB stands with no probe.
        let found = search(128 * MIB, 400 * MIB, on(&VM_CURVE));
        assert_eq!(found.size_bytes, 256 * MIB);
        assert_eq!(found.probe, None, "256 MiB was measured only as the figure");
        assert_eq!(
            found.stopped.as_deref(),
            Some("a chase over 512 MiB does not fit in the free memory")
        );
        // Nothing at all fits: nothing is chased.
        let none = search(128 * MIB, 200 * MIB, |_| Err("chased".to_string()));
        assert_eq!((none.size_bytes, none.checks.len()), (128 * MIB, 0));
    }

    #[test]
    fn growth_stops_after_the_last_allowed_doubling() {
        let steep: Vec<(u64, f64)> = (0..6).map(|k| ((128 * MIB) << k, 100.0 * 1.5f64.powi(k))).collect();
        let found = search(128 * MIB, u64::MAX, on(&steep));
        assert_eq!(found.size_bytes, (128 * MIB) << GROWTH_STEPS_MAX);
        assert_eq!(found.checks.len() as u32, GROWTH_STEPS_MAX + 1);
        assert!(found.stopped.unwrap().contains("still rising"));
        assert!(found.probe.is_some());
    }

    #[test]
    fn noise_and_a_falling_curve_do_not_grow_and_errors_stop() {
        let noisy = |size: u64| {
            Ok::<_, Unasked>(Summary {
                median: if size == 128 * MIB { 100.0 } else { 130.0 },
                p10: 80.0,
                p90: 140.0,
                samples: 3,
            })
        };
        let found = search(128 * MIB, u64::MAX, noisy);
        assert_eq!(
            (found.size_bytes, found.checks[0].verdict),
            (128 * MIB, CurveVerdict::Inconclusive)
        );
        let falling = [(128 * MIB, 150.0), (256 * MIB, 100.0)];
        assert_eq!(search(128 * MIB, u64::MAX, on(&falling)).size_bytes, 128 * MIB);
        let failed = search(128 * MIB, u64::MAX, |_| Err("no memory".to_string()));
        assert_eq!(failed.stopped.as_deref(), Some("no memory"));
        assert_eq!(failed.probe, None);
    }
}
