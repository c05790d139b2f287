//! Golden tests of the counting reports (`watch`, `pmu`): one hand-built
//! summary each, text at 80 and 200 columns and JSON, through the same
//! `TextJson` exporter the commands use. `INSTA_UPDATE=always cargo test -p
//! numasleuth-report --test golden_reports_process` rewrites them.

mod common;

use common::golden_all;
use numasleuth_analyze::pmu::{EventCount, PmuSummary, Unavailable};
use numasleuth_analyze::watch::{ThreadRate, WatchSummary, Writer};
use numasleuth_model::perf::pmu::TargetRaw;
use numasleuth_model::perf::watch::Access;
use numasleuth_report::export::TextJson;
use numasleuth_report::{pmu_json, pmu_text, watch_json, watch_text};

fn thread(tid: u32, writes: u64, exited: bool) -> ThreadRate {
    ThreadRate {
        tid,
        writes,
        writes_per_sec: writes as f64 / 2.0,
        watched_s: 2.0,
        attached_at_s: 0.0,
        exited,
    }
}

fn writer(function: &str, line: u32, samples: u64, share: f64, tids: &[u32]) -> Writer {
    Writer {
        function: Some(function.into()),
        inlined_into: None,
        symbol: Some(function.into()),
        object: Some("/usr/bin/app".into()),
        file: Some("src/stats.c".into()),
        path: Some("/build/app/src/stats.c".into()),
        line: Some(line),
        addresses: vec![0x401136 + u64::from(line)],
        samples,
        share,
        tids: tids.to_vec(),
    }
}

/// Two threads writing one counter for 2 s, one of them from two places.
fn watch_summary() -> WatchSummary {
    WatchSummary {
        pid: 4242,
        address: 0x404040,
        symbol: Some("stats_counter".into()),
        object: Some("/usr/bin/app".into()),
        len_bytes: 8,
        access: Access::Write,
        duration_s: 2.0,
        writes_total: 300_000,
        writes_per_sec: 150_000.0,
        threads: vec![thread(4243, 200_000, false), thread(4244, 100_000, true)],
        writers: vec![
            writer("stats_bump", 42, 2000, 0.667, &[4243]),
            writer("stats_reset", 57, 1000, 0.333, &[4243, 4244]),
        ],
        samples_total: 3000,
        lost_samples: 12,
        threads_missed: 0,
        process_exited: false,
        notes: vec!["12 sample(s) lost (ring buffer full): writers are ranked from the rest; the count is exact".into()],
    }
}

#[test]
fn watch() {
    let summary = watch_summary();
    golden_all(
        "watch",
        &TextJson::new(watch_json::build(&summary), |_| watch_text::render(&summary)),
    );
}

fn event(name: &str, value: u64, running_share: f64) -> EventCount {
    let enabled_ns = 2_000_000_000;
    let running_ns = (enabled_ns as f64 * running_share) as u64;
    EventCount {
        name: name.into(),
        pmu: "software".into(),
        value,
        time_enabled_ns: enabled_ns,
        time_running_ns: running_ns,
        scaled_value: (running_ns > 0).then(|| value as f64 / running_share),
        scaled: running_ns < enabled_ns,
        threads: 3,
    }
}

/// A software-only count of a running process (no hardware PMU in a VM),
/// one event multiplexed, one unavailable.
fn pmu_summary() -> PmuSummary {
    PmuSummary {
        target: TargetRaw::Pid {
            pid: 4242,
            threads_listed: 3,
            threads_attached: 3,
            threads_not_attached: 0,
            threads_started_while_attaching: 0,
            process_exited: false,
        },
        duration_s: 2.0,
        events: vec![
            event("task-clock", 5_912_345_678, 1.0),
            event("context-switches", 1_204, 1.0),
            event("page-faults", 88_000, 0.5),
        ],
        unavailable: vec![Unavailable {
            name: "node-load-misses".into(),
            pmu: "cpu".into(),
            why: "not on this CPU or VM (ENOENT)".into(),
        }],
        ipc: None,
        hardware_pmu: false,
        kernel_included: false,
        notes: vec!["no hardware counters here: cycles, instructions and cache events are unavailable".into()],
    }
}

#[test]
fn pmu() {
    let summary = pmu_summary();
    golden_all(
        "pmu",
        &TextJson::new(pmu_json::build(&summary), |_| pmu_text::render(&summary)),
    );
}
