use super::*;

/// Raw samples as `mem --json --raw` writes them, replayed: every derived
/// figure below is worked out by hand from the fixture.
#[test]
fn replaying_raw_mem_samples_gives_the_derived_figures() {
    let raw: MemRaw = serde_json::from_str(include_str!("../fixtures/mem-raw.json")).unwrap();
    let chase = &raw.latency[0].chase;
    // (1100 − 100) / 10, (1300 − 100) / 10, (1200 − 100) / 10, and 60 ns,
    // shorter than the clock's own 100 ns, as 0.
    assert_eq!(chase.ns_per_op(), vec![100.0, 120.0, 110.0, 0.0]);
    assert_eq!(chase.at_or_below_overhead(), 1);
    let s = chase.summary().unwrap();
    assert_eq!((s.median, s.samples), (105.0, 4));
    assert!((s.p10 - 30.0).abs() < 1e-9 && (s.p90 - 117.0).abs() < 1e-9, "{s:?}");
    // The raw values stay as measured: nothing clamped in the document.
    assert_eq!(chase.elapsed_ns[3], 60);
    let mut checks = crate::row_warnings::RowChecks::new("cells");
    checks.add("latency".into(), chase, Some(&s));
    let warnings = checks.warnings();
    assert!(
        warnings.iter().any(|w| w
            .starts_with("1 of 1 cells had samples no longer than the clock's own overhead (100 ns)")
            && w.contains("(worst: latency, 1 of 4 samples)")),
        "{warnings:?}"
    );

    let bandwidth = &raw.bandwidth[0].samples;
    // 4 GB in 1 s and in 2 s; the zero-time sample has no rate.
    assert_eq!(bandwidth.bytes_per_sec(), vec![4e9, 2e9]);
    assert_eq!(bandwidth.summary().unwrap().median, 3e9);

    let point = &raw.loaded[0];
    // One clock read per transfer: 100 × 20 ns off each sample first.
    assert_eq!(point.chase.ns_per_op(), vec![30.0, 50.0]);
    assert_eq!(point.chase.summary().unwrap().median, 40.0);
    assert_eq!(point.chase.at_or_below_overhead(), 0);
    assert_eq!(point.load.bytes_per_sec(), vec![2e9]);
}

#[test]
fn round_trips_through_json() {
    let raw: MemRaw = serde_json::from_str(include_str!("../fixtures/mem-raw.json")).unwrap();
    let again: MemRaw = serde_json::from_str(&serde_json::to_string(&raw).unwrap()).unwrap();
    assert_eq!(raw, again);
}

#[test]
fn no_ops_and_no_samples_are_no_figure_not_a_panic() {
    let empty = TimedSamples {
        elapsed_ns: Vec::new(),
        timer_overhead_ns: 10.0,
        timer_reads_per_sample: 1,
        ops_per_sample: 0,
    };
    assert!(empty.summary().is_none());
    let zero_ops = TimedSamples {
        elapsed_ns: vec![u64::MAX],
        ..empty
    };
    assert!(zero_ops.ns_per_op()[0].is_finite());
}
