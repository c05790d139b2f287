use super::*;
use numasleuth_model::perf::errno::Errno;
use numasleuth_model::perf::pmu::{EventRaw, EventSpec, OpenFailure, Reading};

fn spec(name: &str, pmu: &str) -> EventSpec {
    EventSpec {
        name: name.into(),
        pmu: pmu.into(),
        type_id: 0,
        config: 0,
        config1: 0,
        config2: 0,
        config3: 0,
    }
}

fn counted(name: &str, pmu: &str, readings: &[(u64, u64, u64)]) -> EventRaw {
    EventRaw {
        spec: spec(name, pmu),
        readings: readings
            .iter()
            .enumerate()
            .map(|(i, (value, enabled, running))| Reading {
                tid: 100 + i as u32,
                value: *value,
                time_enabled_ns: *enabled,
                time_running_ns: *running,
            })
            .collect(),
    }
}

fn failed(name: &str, pmu: &str, errno: Errno) -> OpenFailure {
    OpenFailure {
        spec: spec(name, pmu),
        errno: Some(errno.raw()),
        message: String::new(),
    }
}

fn raw(counted: Vec<EventRaw>, failed: Vec<OpenFailure>) -> PmuRaw {
    PmuRaw {
        target: TargetRaw::Command {
            argv: vec!["true".into()],
            pid: 1,
            exit_code: Some(0),
            signal: None,
        },
        duration_ns: 1_500_000_000,
        counted,
        failed,
        kernel_included: true,
        fd_limit: 1024,
    }
}

#[test]
fn scaling_follows_enabled_over_running() {
    assert_eq!(scale(1000, 100, 100), (Some(1000.0), false));
    assert_eq!(scale(1000, 100, 25), (Some(4000.0), true));
    assert_eq!(scale(0, 0, 0), (Some(0.0), false));
    assert_eq!(scale(0, 100, 0), (None, true));
    // No overflow for huge values and times.
    let (value, scaled) = scale(u64::MAX, u64::MAX, u64::MAX / 2);
    assert!(scaled && value.unwrap() > u64::MAX as f64, "{value:?}");
}

#[test]
fn threads_are_summed_then_scaled_and_ipc_uses_the_scaled_values() {
    let summary = summarize(
        &raw(
            vec![
                counted("cycles", "hardware", &[(1000, 100, 50), (1000, 100, 50)]),
                counted("instructions", "hardware", &[(3000, 200, 200)]),
                counted("task-clock", "software", &[(7, 7, 7)]),
            ],
            vec![],
        ),
        Context::default(),
    );
    let cycles = &summary.events[0];
    assert_eq!(
        (cycles.value, cycles.time_enabled_ns, cycles.time_running_ns),
        (2000, 200, 100)
    );
    assert_eq!(
        (cycles.scaled_value, cycles.scaled, cycles.threads),
        (Some(4000.0), true, 2)
    );
    assert_eq!(summary.ipc, Some(0.75));
    assert!(summary.hardware_pmu);
    assert_eq!(summary.duration_s, 1.5);
    assert!(
        summary
            .notes
            .iter()
            .any(|n| n.starts_with("1 event(s) shared counters")),
        "{:?}",
        summary.notes
    );
}

#[test]
fn no_hardware_pmu_is_a_note_not_an_error() {
    let summary = summarize(
        &raw(
            vec![counted("task-clock", "software", &[(5, 5, 5)])],
            vec![
                failed("cycles", "hardware", Errno::NoEntry),
                failed("instructions", "hardware", Errno::NotSupported),
            ],
        ),
        Context {
            not_tried: vec![Unavailable {
                name: "cas_count_read".into(),
                pmu: "uncore_imc_0".into(),
                why: "system-wide".into(),
            }],
            notes: vec!["from the plan".into()],
            paranoid: Some(2),
        },
    );
    assert_eq!(summary.ipc, None);
    assert!(!summary.hardware_pmu);
    assert_eq!(summary.notes[0], "from the plan");
    assert_eq!(
        summary.notes[1],
        "no hardware PMU (virtualised?): IPC unavailable; the software events are still counted"
    );
    assert_eq!(summary.unavailable.len(), 3);
    assert!(summary.unavailable[0].why.starts_with("not on this CPU or VM (ENOENT)"));
    assert_eq!(summary.unavailable[2].why, "system-wide");
}

#[test]
fn a_refusal_and_a_missing_counter_are_told_apart() {
    let summary = summarize(
        &raw(vec![], vec![failed("cycles", "hardware", Errno::Access)]),
        Context {
            paranoid: Some(3),
            ..Context::default()
        },
    );
    assert!(
        summary.notes[0].starts_with("hardware events refused: kernel.perf_event_paranoid is 3"),
        "{:?}",
        summary.notes
    );
}

#[test]
fn an_event_that_never_ran_has_no_value_and_says_so() {
    let summary = summarize(
        &raw(
            vec![
                counted("cycles", "hardware", &[(0, 500, 0)]),
                counted("instructions", "hardware", &[(10, 500, 500)]),
            ],
            vec![],
        ),
        Context::default(),
    );
    assert_eq!(summary.events[0].scaled_value, None);
    assert_eq!(summary.ipc, None);
    assert!(
        summary
            .notes
            .iter()
            .any(|n| n.contains("never got a counter while enabled, so have no value: cycles")),
        "{:?}",
        summary.notes
    );
}

#[test]
fn a_failing_command_and_a_user_only_count_are_noted() {
    let mut r = raw(vec![counted("task-clock", "software", &[(5, 5, 5)])], vec![]);
    r.target = TargetRaw::Command {
        argv: vec!["false".into()],
        pid: 1,
        exit_code: None,
        signal: Some(9),
    };
    r.kernel_included = false;
    let notes = summarize(
        &r,
        Context {
            paranoid: Some(2),
            ..Context::default()
        },
    )
    .notes;
    assert!(
        notes.contains(&"the command was killed by signal 9".to_string()),
        "{notes:?}"
    );
    assert!(
        notes
            .iter()
            .any(|n| n.starts_with("kernel.perf_event_paranoid is 2: only user-space work")),
        "{notes:?}"
    );
}

#[test]
fn nothing_counted_is_said_with_the_software_reason() {
    let summary = summarize(
        &raw(
            vec![],
            vec![
                failed("cycles", "hardware", Errno::NoEntry),
                failed("task-clock", "software", Errno::Access),
            ],
        ),
        Context::default(),
    );
    let why = nothing_counted(&summary).unwrap();
    assert!(
        why.starts_with("none of the 2 events could be counted; task-clock: permission denied (EACCES)"),
        "{why}"
    );
    let some = summarize(
        &raw(vec![counted("task-clock", "software", &[(1, 1, 1)])], vec![]),
        Context::default(),
    );
    assert_eq!(nothing_counted(&some), None);
}
