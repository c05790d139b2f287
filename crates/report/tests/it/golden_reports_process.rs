//! Golden tests of the counting reports (`watch`, `pmu`, `pmu diff`,
//! `memwatch`) and of `irq` with a `--fix` plan: one hand-built summary
//! each, text at 80 and 200 columns and JSON (and the memwatch SVG),
//! through the exporters the commands use. `INSTA_UPDATE=always cargo test -p
//! numasleuth-report --test it golden_reports_process::` rewrites them.

use crate::common;

use common::golden_all;
use numasleuth_analyze::irq::{AffinityChange, DeviceIrqs, IrqDocument, IrqRow};
use numasleuth_analyze::memwatch::{machine_row, rows, EventTracker, MachineCounters, NodeSample, Sample};
use numasleuth_analyze::pmu::diff::{DiffRow, PmuDiff};
use numasleuth_analyze::pmu::diff_document::{ComparedRun, DiffDocument};
use numasleuth_analyze::pmu::{EventCount, PmuSummary, Unavailable};
use numasleuth_analyze::watch::{ThreadRate, WatchSummary, Writer};
use numasleuth_model::perf::pmu::TargetRaw;
use numasleuth_model::perf::watch::Access;
use numasleuth_parse::IdList;
use numasleuth_report::export::TextJson;
use numasleuth_report::irq_json::IrqReport;
use numasleuth_report::memwatch_text::{render_sample, sample_json, MemwatchReport};
use numasleuth_report::pmu_diff_json;
use numasleuth_report::{pmu_diff_text, pmu_json, pmu_text, watch_json, watch_text};

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
        notes: vec![
            "12 sample(s) lost (ring buffer full): writers are ranked from the rest; the count is exact".into(),
        ],
    }
}

#[test]
fn watch() {
    let summary = watch_summary();
    golden_all(
        "watch",
        &TextJson::new(watch_json::build(&summary), |layout| {
            watch_text::render(&summary, layout)
        }),
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
        &TextJson::new(pmu_json::build(&summary), |layout| pmu_text::render(&summary, layout)),
    );
}

fn node_sample(node: u32, free_pages: u64, numa_miss: u64, pgscan_kswapd: u64) -> NodeSample {
    NodeSample {
        node,
        free_pages,
        min_pages: 40_000,
        low_pages: 50_000,
        high_pages: 60_000,
        numa_miss: Some(numa_miss),
        numa_foreign: Some(numa_miss / 2),
        pgscan_kswapd: Some(pgscan_kswapd),
        pgscan_direct: Some(0),
    }
}

/// One second apart: node 0's free memory falls below its low watermark,
/// kswapd scans, then it recovers; node 1 stays healthy.
fn memwatch_samples() -> Vec<Sample> {
    let node0 = [(80_000, 0), (48_000, 12_000), (45_000, 30_000), (61_000, 31_000)];
    node0
        .iter()
        .enumerate()
        .map(|(i, &(free, scanned))| Sample {
            t_s: i as f64,
            nodes: vec![
                node_sample(0, free, 1_000 + 400 * i as u64, scanned),
                node_sample(1, 200_000, 50, 0),
            ],
            machine: MachineCounters {
                pgscan_kswapd: scanned,
                pgscan_direct: 0,
                pgsteal_kswapd: scanned * 9 / 10,
                pgsteal_direct: 0,
                allocstall: 0,
                oom_kill: Some(0),
            },
            zone_reclaim_mode: Some(0),
        })
        .collect()
}

/// The report as `memwatch` assembles it: text and a JSON record per
/// interval, and the samples behind the chart. The closing sampling-cost
/// line is left out: it is measured, not derived from the samples.
fn memwatch_report() -> MemwatchReport {
    let page_bytes = 4096;
    let samples = memwatch_samples();
    let mut tracker = EventTracker::new(page_bytes);
    let mut report = MemwatchReport {
        history: samples.clone(),
        ..MemwatchReport::default()
    };
    for pair in samples.windows(2) {
        let (rows, machine) = (rows(&pair[0], &pair[1]), machine_row(&pair[0], &pair[1]));
        let events = tracker.events(&pair[0], &pair[1]);
        report
            .text
            .push_str(&render_sample(&rows, &machine, &events, page_bytes));
        report.records.push(sample_json(&rows, &machine, &events));
    }
    report
}

#[test]
fn memwatch() {
    golden_all("memwatch", &memwatch_report());
}

fn irq_row(irq: u32, actions: &str, served_by: u32, count: u64, off_node: bool) -> IrqRow {
    IrqRow {
        irq,
        actions: actions.into(),
        affinity: Some(IdList::new(vec![served_by])),
        effective: Some(IdList::new(vec![served_by])),
        count,
        off_node,
        error: None,
    }
}

/// A NIC on node 1 with one of its queues served by a node-0 CPU, and the
/// `--fix` dry-run plan that moves it.
#[test]
fn irq_with_a_plan() {
    let devices = vec![DeviceIrqs {
        kind: numasleuth_model::DeviceKind::Net,
        name: "eth0".into(),
        pci: "0000:11:01.0".into(),
        node: Some(1),
        local_cpus: Some(IdList::new((8..16).collect())),
        irqs: vec![
            irq_row(45, "eth0-rx-0", 0, 1_204_332, true),
            irq_row(46, "eth0-rx-1", 9, 998_120, false),
            irq_row(47, "eth0-tx-0", 10, 0, false),
        ],
        error: None,
    }];
    let plan = vec![AffinityChange {
        irq: 45,
        device: "eth0".into(),
        before: "0".into(),
        after: "8-11".into(),
    }];
    let document = IrqDocument {
        devices,
        irqbalance_pids: vec![812],
        plan,
        journal: None,
    };
    let report = IrqReport {
        document: &document,
        planned: true,
    };
    golden_all("irq_plan", &report);
}

fn diff_row(name: &str, a: f64, b: f64) -> DiffRow {
    let ratio = (a > 0.0 && b > 0.0).then(|| b / a);
    DiffRow {
        name: name.into(),
        pmu: "software".into(),
        a,
        b,
        ratio,
        log_ratio: ratio.map(f64::ln),
        zero_in: None,
    }
}

/// A good and a bad run compared per second: page faults and migrations
/// up in the bad one, one event counted only there.
#[test]
fn pmu_diff() {
    let diff = PmuDiff {
        per: "second".into(),
        min_count: 100.0,
        rows: vec![
            diff_row("cpu-migrations", 120.0, 2_400.0),
            diff_row("page-faults", 44_000.0, 91_000.0),
            diff_row("context-switches", 602.0, 640.0),
            diff_row("task-clock", 1.98e9, 1.99e9),
        ],
        only_in_a: vec![],
        only_in_b: vec!["cpu/node-load-misses".into()],
        both_zero: vec!["major-faults".into()],
        too_few: vec!["alignment-faults".into()],
    };
    let compared = |file: &str, duration_s| ComparedRun {
        file: file.into(),
        duration_s,
    };
    let doc = DiffDocument {
        a: compared("good.json", 2.0),
        b: compared("bad.json", 2.1),
        diff,
    };
    let report = TextJson::new(pmu_diff_json::document(&doc), |layout| {
        pmu_diff_text::render(&doc.diff, "good.json (2.000 s)", "bad.json (2.100 s)", layout)
    });
    golden_all("pmu_diff", &report);
}
