use super::*;

fn run(duration_s: f64, events: &[(&str, Option<f64>)]) -> RunCounts {
    RunCounts {
        duration_s,
        events: events
            .iter()
            .map(|(name, v)| {
                let (pmu, name) = name.split_once('/').unwrap_or(("software", name));
                Counted {
                    name: name.to_string(),
                    pmu: pmu.to_string(),
                    scaled_value: *v,
                }
            })
            .collect(),
    }
}

fn names(d: &PmuDiff) -> Vec<&str> {
    d.rows.iter().map(|r| r.name.as_str()).collect()
}

#[test]
fn ranked_by_how_far_apart_either_way() {
    let a = run(
        1.0,
        &[
            ("page-faults", Some(1000.0)),
            ("task-clock", Some(1e9)),
            ("context-switches", Some(800.0)),
        ],
    );
    let b = run(
        1.0,
        &[
            ("page-faults", Some(30_000.0)),
            ("task-clock", Some(1.1e9)),
            ("context-switches", Some(200.0)),
        ],
    );
    let d = diff(&a, &b, &Per::Second, DEFAULT_MIN_COUNT).unwrap();
    // ×30, ÷4, ×1.1: a quartering outranks a 10% rise.
    assert_eq!(names(&d), ["page-faults", "context-switches", "task-clock"]);
    assert_eq!(d.rows[0].ratio, Some(30.0));
    assert!((d.rows[1].log_ratio.unwrap() - 0.25f64.ln()).abs() < 1e-12);
    assert_eq!(d.per, "second");
}

#[test]
fn per_second_removes_the_length_of_the_run() {
    // B ran twice as long and did the same per second, except faults.
    let a = run(2.0, &[("task-clock", Some(2e9)), ("page-faults", Some(2000.0))]);
    let b = run(4.0, &[("task-clock", Some(4e9)), ("page-faults", Some(40_000.0))]);
    let d = diff(&a, &b, &Per::Second, DEFAULT_MIN_COUNT).unwrap();
    assert_eq!(d.rows[1].name, "task-clock");
    assert_eq!(d.rows[1].ratio, Some(1.0));
    assert_eq!(
        (d.rows[0].a, d.rows[0].b, d.rows[0].ratio),
        (1000.0, 10_000.0, Some(10.0))
    );
}

#[test]
fn per_event_and_per_op() {
    let a = run(1.0, &[("instructions", Some(1e9)), ("cpu/remote", Some(1e6))]);
    let b = run(1.0, &[("instructions", Some(5e8)), ("cpu/remote", Some(2e6))]);
    let d = diff(&a, &b, &Per::Event("instructions".into()), DEFAULT_MIN_COUNT).unwrap();
    assert_eq!(names(&d), ["cpu/remote"], "the unit itself is not a row");
    assert_eq!(d.rows[0].ratio, Some(4.0));
    assert_eq!(d.per, "instructions");
    let d = diff(
        &a,
        &b,
        &Per::Op {
            ops_a: 1000.0,
            ops_b: 4000.0,
        },
        DEFAULT_MIN_COUNT,
    )
    .unwrap();
    assert_eq!(d.rows[1].name, "cpu/remote");
    assert_eq!(d.rows[1].ratio, Some(0.5));
}

#[test]
fn zeros_and_rare_events() {
    let a = run(
        1.0,
        &[
            ("major-faults", Some(0.0)),
            ("alignment-faults", Some(0.0)),
            ("cpu-migrations", Some(3.0)),
            ("page-faults", Some(1000.0)),
            ("context-switches", Some(0.0)),
        ],
    );
    let b = run(
        1.0,
        &[
            ("major-faults", Some(500.0)),
            ("alignment-faults", Some(0.0)),
            ("cpu-migrations", Some(9.0)),
            ("page-faults", Some(90_000.0)),
            ("context-switches", Some(50.0)),
        ],
    );
    let d = diff(&a, &b, &Per::Second, DEFAULT_MIN_COUNT).unwrap();
    // Zero in A and 500 in B: infinite, first; then the ×90.
    assert_eq!(names(&d), ["major-faults", "page-faults"]);
    assert_eq!(d.rows[0].zero_in, Some(Side::A));
    assert_eq!((d.rows[0].ratio, d.rows[0].log_ratio), (None, None));
    assert_eq!(d.both_zero, ["alignment-faults"]);
    assert_eq!(d.too_few, ["context-switches", "cpu-migrations"]);
    // Zero in B: a ratio of 0, still ranked first.
    let d = diff(&b, &a, &Per::Second, DEFAULT_MIN_COUNT).unwrap();
    assert_eq!(
        (d.rows[0].name.as_str(), d.rows[0].ratio, d.rows[0].zero_in),
        ("major-faults", Some(0.0), Some(Side::B))
    );
    // With no floor every nonzero pair is ranked.
    assert_eq!(diff(&a, &b, &Per::Second, 0.0).unwrap().too_few.len(), 0);
}

#[test]
fn events_in_one_file_only_are_listed_apart() {
    let a = run(
        1.0,
        &[("cycles", Some(1e9)), ("task-clock", Some(1e9)), ("msr/tsc", None)],
    );
    let b = run(
        1.0,
        &[
            ("task-clock", Some(1e9)),
            ("msr/tsc", Some(2e9)),
            ("page-faults", Some(10.0)),
        ],
    );
    let d = diff(&a, &b, &Per::Second, DEFAULT_MIN_COUNT).unwrap();
    assert_eq!(names(&d), ["task-clock"]);
    assert_eq!(d.only_in_a, ["cycles"]);
    assert_eq!(d.only_in_b, ["msr/tsc", "page-faults"]);
}

#[test]
fn what_cannot_be_normalised_is_an_error() {
    let a = run(1.0, &[("instructions", Some(0.0)), ("task-clock", Some(1.0))]);
    let b = run(0.0, &[("task-clock", Some(1.0))]);
    let per_second = diff(&a, &b, &Per::Second, 1.0).unwrap_err().to_string();
    assert!(per_second.contains("B: duration_s is 0"), "{per_second}");
    let zero = diff(&a, &a, &Per::Event("instructions".into()), 1.0)
        .unwrap_err()
        .to_string();
    assert!(zero.contains("`instructions` is 0 in A"), "{zero}");
    let missing = diff(&a, &b, &Per::Event("cycles".into()), 1.0).unwrap_err().to_string();
    assert!(missing.contains("`cycles` was not counted in A"), "{missing}");
    assert!(diff(&a, &a, &Per::Op { ops_a: 0.0, ops_b: 1.0 }, 1.0).is_err());
    let twice = run(1.0, &[("task-clock", Some(1.0)), ("task-clock", Some(2.0))]);
    assert!(diff(&twice, &a, &Per::Second, 1.0)
        .unwrap_err()
        .to_string()
        .contains("listed twice"));
    let negative = run(1.0, &[("task-clock", Some(-1.0))]);
    assert!(diff(&a, &negative, &Per::Second, 1.0)
        .unwrap_err()
        .to_string()
        .contains("not a count"));
    let nan = run(f64::NAN, &[]);
    assert!(diff(&nan, &a, &Per::Second, 1.0).is_err());
}

/// Durations no run has (a subnormal, anything under a microsecond) and
/// values that are not counts are refused, and a pair of counts whose
/// normalised ratio overflows is an error rather than a rank on infinity.
#[test]
fn nothing_is_ranked_on_infinity() {
    let a = run(1.0, &[("task-clock", Some(1e3))]);
    for tiny in [5e-324, f64::MIN_POSITIVE, 1e-9] {
        let b = run(tiny, &[("task-clock", Some(1e3))]);
        let err = diff(&a, &b, &Per::Second, 1.0).unwrap_err().to_string();
        assert!(err.contains("B: duration_s is") && err.contains("at least"), "{err}");
    }
    let fraction = run(1.0, &[("task-clock", Some(1e-300))]);
    assert!(diff(&fraction, &a, &Per::Second, 1.0)
        .unwrap_err()
        .to_string()
        .contains("not a count"));
    let small = run(1.0, &[("task-clock", Some(1.0)), ("x", Some(1e3))]);
    let huge = run(1e-6, &[("task-clock", Some(1.7e308)), ("x", Some(1e3))]);
    let err = diff(&small, &huge, &Per::Second, 1.0).unwrap_err().to_string();
    assert!(
        err.contains("`task-clock` per second") && err.contains("too large"),
        "{err}"
    );
    // Per event the same counts stay finite, and are ranked.
    let d = diff(&small, &huge, &Per::Event("x".into()), 1.0).unwrap();
    assert!(d
        .rows
        .iter()
        .all(|r| r.b.is_finite() && r.ratio.is_some_and(f64::is_finite)));
}
