use std::collections::BTreeMap;

use numasleuth_model::runs::{Exit, Usage};

use super::*;

fn raw() -> RawRun {
    RawRun {
        index: 2,
        start_cpu: 5,
        start_node: Some(1),
        wall_ns: 1_500_000_000,
        exit: Exit {
            code: Some(0),
            signal: None,
            usage: Usage {
                minor_faults: 10,
                major_faults: 1,
                voluntary_switches: 3,
                involuntary_switches: 4,
                user_us: 700,
                system_us: 80,
            },
        },
        cpu_migrations: Ok(9),
        placement: None,
        release_failures: Vec::new(),
        output_note: None,
    }
}

#[test]
fn without_a_pattern_the_metric_is_the_wall_time_in_seconds() {
    assert_eq!(metric(None, 2_500_000_000, None), Ok(2.5));
}

#[test]
fn a_pattern_takes_the_number_of_the_last_matching_line() {
    let pattern = MetricPattern::new("ops/s").unwrap();
    let line = (7, "ops/s: 1234.5".to_string());
    assert_eq!(metric(Some(&pattern), 1, Some(&line)), Ok(1234.5));
    assert_eq!(metric(Some(&pattern), 1, None), Err(MetricMissing::NoMatch));
    let bare = (3, "ops/s: none".to_string());
    assert_eq!(
        metric(Some(&pattern), 1, Some(&bare)),
        Err(MetricMissing::NoNumber {
            line_number: 3,
            line: "ops/s: none".into()
        })
    );
}

#[test]
fn a_row_carries_the_counters_the_start_and_the_exit() {
    let row = run_row(raw(), 42.0);
    assert_eq!(
        (row.index, row.number(), row.start_cpu, row.start_node),
        (2, 3, 5, Some(1))
    );
    assert_eq!((row.metric, row.wall_s), (42.0, 1.5));
    assert_eq!((row.exit_code, row.signal), (Some(0), None));
    let expected: BTreeMap<String, u64> = [
        ("minor_faults", 10),
        ("major_faults", 1),
        ("voluntary_switches", 3),
        ("involuntary_switches", 4),
        ("context_switches", 7),
        ("user_us", 700),
        ("system_us", 80),
        ("cpu_migrations", 9),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect();
    assert_eq!(row.counters, expected);
    let attributes: Vec<(&str, &str)> = row.attributes.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    assert_eq!(
        attributes,
        [("exit_code", "0"), ("start_cpu", "5"), ("start_node", "1")]
    );
    assert!(!row.placement_sampled);
    assert_eq!(row.notes, ["exited before the settle time: placement not sampled"]);
}

#[test]
fn a_counter_that_could_not_be_read_is_absent_not_zero() {
    let mut run = raw();
    run.cpu_migrations = Err("perf_event_paranoid".into());
    run.start_node = None;
    run.exit.code = None;
    run.exit.signal = Some(9);
    let row = run_row(run, 1.0);
    assert!(!row.counters.contains_key("cpu_migrations"));
    assert!(!row.attributes.contains_key(&RunAttribute::StartNode));
    assert!(!row.attributes.contains_key(&RunAttribute::ExitCode));
    assert_eq!(row.signal, Some(9));
}

#[test]
fn a_placement_sample_adds_its_attributes_counter_and_notes_before_release_and_output_notes() {
    let mut run = raw();
    run.placement = Some(Ok(Placement {
        attributes: Attributes::from([(RunAttribute::BssNode, "1".to_string())]),
        program: Some("/bin/work".into()),
        cpu_migrations: Some(4),
        notes: vec!["heap not resident".into()],
    }));
    run.release_failures = vec!["thread 12: EPERM".into()];
    run.output_note = Some("output still open".into());
    let row = run_row(run, 1.0);
    assert!(row.placement_sampled);
    assert_eq!(row.attributes[&RunAttribute::BssNode], "1");
    assert_eq!(row.counters["cpu_migrations_at_settle"], 4);
    assert_eq!(
        row.notes,
        ["heap not resident", "release: thread 12: EPERM", "output still open"]
    );
}

#[test]
fn a_failed_placement_sample_says_why() {
    let mut run = raw();
    run.placement = Some(Err("could not sample placement: gone".into()));
    let row = run_row(run, 1.0);
    assert!(!row.placement_sampled);
    assert_eq!(row.notes, ["could not sample placement: gone"]);
}

#[test]
fn context_switches_saturate_rather_than_overflow() {
    let mut run = raw();
    run.exit.usage.voluntary_switches = u64::MAX;
    assert_eq!(run_row(run, 1.0).counters["context_switches"], u64::MAX);
}

#[test]
fn spread_alternates_nodes_and_keeps_every_cpu() {
    let node = |cpu: u32| Some(if cpu < 4 { 0 } else { 1 });
    assert_eq!(spread(&[0, 1, 2, 3, 4, 5], node), [0, 4, 1, 5, 2, 3]);
    assert_eq!(spread(&[0, 1], |_| None), [0, 1]);
    assert_eq!(spread(&[1, 6], node), [1, 6]);
    assert!(spread(&[], node).is_empty());
}
