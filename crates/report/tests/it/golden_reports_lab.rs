//! Golden tests of the three `lab` experiments (false sharing, locks, a
//! remote global) and of `runs`: raw samples made up by hand for a two-node machine, the
//! rows derived by analyze as the command derives them, then every format
//! (text at 80 and 200 columns, JSON, SVG). `INSTA_UPDATE=always cargo test
//! -p numasleuth-report --test it golden_reports_lab::` rewrites them.

use crate::common;

use numasleuth_model::lab::{Global, Layout, Load, LockKind, Op, Placement};

use common::{golden_all, summary};
use numasleuth_analyze::lab::documents::{FalseSharingDocument, LocksDocument, RemoteGlobalDocument, RunInfo};
use numasleuth_analyze::lab::{false_sharing, locks, remote_global, Raw};
use numasleuth_analyze::runs::attributes::{Attributes, RunAttribute};
use numasleuth_analyze::runs::RunRow;
use numasleuth_report::lab_charts::{self, LabReport};
use numasleuth_report::lab_text;
use numasleuth_report::runs_text::RunsReport;

fn run_info() -> RunInfo {
    RunInfo {
        cpu_model: Some("Intel(R) Xeon(R) Gold 6338 CPU @ 2.00GHz".into()),
        nodes: vec![0, 1],
        allowed_cpus: (0..16).collect(),
        samples_per_config: 3,
        sample_ms: 200,
        oversubscribed: false,
    }
}

/// Three 200 ms samples in which each of `threads` threads did about
/// `ops_per_thread` operations, busy 95% of the time.
fn raw(threads: usize, ops_per_thread: u64) -> Vec<Raw> {
    [0_u64, 2, 5]
        .iter()
        .map(|&jitter| Raw {
            span_ns: 200_000_000,
            ops_per_thread: (0..threads as u64)
                .map(|t| ops_per_thread + ops_per_thread * (jitter + t) / 100)
                .collect(),
            cpu_ns_per_thread: vec![190_000_000; threads],
        })
        .collect()
}

/// CPUs 0.. on node 0 (compact) or alternating nodes 0 and 1 (spread).
fn cpus(placement: Placement, threads: usize) -> Vec<u32> {
    (0..threads as u32)
        .map(|i| {
            if placement == Placement::Spread {
                (i % 2) * 8 + i / 2
            } else {
                i
            }
        })
        .collect()
}

fn false_sharing_document() -> FalseSharingDocument {
    let mut measured = Vec::new();
    for (layout, per_thread) in [(Layout::Packed, 9_000_000), (Layout::Padded, 60_000_000)] {
        for placement in [Placement::Compact, Placement::Spread] {
            let slower = if placement == Placement::Spread { 2 } else { 1 };
            measured.push(false_sharing::Measured {
                layout,
                op: Op::Atomic,
                placement,
                threads: 4,
                cpus: cpus(placement, 4),
                counts_verified: true,
                raw: raw(4, per_thread / slower),
            });
        }
    }
    let results = false_sharing::rows(measured);
    FalseSharingDocument {
        run: run_info(),
        meaning: false_sharing::meaning(&results),
        results,
        counters_node: 0,
        placement_verified: true,
        warnings: vec![],
    }
}

#[test]
fn lab_false_sharing() {
    let document = false_sharing_document();
    golden_all(
        "lab_false_sharing",
        &LabReport {
            document: &document,
            text: lab_text::false_sharing,
            chart: lab_charts::false_sharing,
        },
    );
}

fn locks_document() -> LocksDocument {
    let mut measured = Vec::new();
    for (lock, per_thread) in [
        (LockKind::Ticket, 1_500_000),
        (LockKind::Mcs, 2_500_000),
        (LockKind::Mutex, 900_000),
    ] {
        for placement in [Placement::Compact, Placement::Spread] {
            let slower = if placement == Placement::Spread { 3 } else { 1 };
            measured.push(locks::Measured {
                lock,
                load: Load::Empty,
                placement,
                threads: 4,
                cpus: cpus(placement, 4),
                count_verified: Some(true),
                raw: raw(4, per_thread / slower),
            });
        }
    }
    let results = locks::rows(measured);
    LocksDocument {
        run: run_info(),
        meaning: locks::meaning(&results),
        results,
        lock_node: 0,
        placement_verified: true,
        warnings: vec!["mutex spread: p10–p90 spread 27% of the median; rerun with more --samples".into()],
    }
}

#[test]
fn lab_locks() {
    let document = locks_document();
    golden_all(
        "lab_locks",
        &LabReport {
            document: &document,
            text: lab_text::locks,
            chart: lab_charts::locks,
        },
    );
}

fn remote_global_document() -> RemoteGlobalDocument {
    let writes_per_op = 1;
    let cycles_per_ns = Some(2.0);
    let measured = [
        (Global::PerThread, 0, 80_000_000),
        (Global::Local, 0, 9_000_000),
        (Global::Remote, 1, 4_000_000),
    ]
    .into_iter()
    .flat_map(|(global, global_node, per_thread)| {
        [1, 4].map(|threads| remote_global::Measured {
            global,
            threads,
            cpus: cpus(Placement::Compact, threads),
            global_node,
            placement_verified: true,
            raw: raw(threads, per_thread / threads as u64),
        })
    })
    .collect();
    let results = remote_global::rows(measured);
    let transfers = vec![
        remote_global::Transfer {
            global: Global::Local,
            home_node: 0,
            cpus: [0, 1],
            ns: summary(48.0, 2.0),
        },
        remote_global::Transfer {
            global: Global::Remote,
            home_node: 1,
            cpus: [0, 1],
            ns: summary(118.0, 6.0),
        },
    ];
    let models = remote_global::models(&results, &transfers, writes_per_op, cycles_per_ns);
    RemoteGlobalDocument {
        run: run_info(),
        node: 0,
        remote_node: Some(1),
        writes_per_op,
        local_words_per_op: 16,
        meaning: remote_global::meaning(&results, &models, true, writes_per_op),
        results,
        ns_per_invalidation: Some(118.0),
        cycles_per_invalidation: Some(236.0),
        ns_per_invalidation_local: Some(48.0),
        transfers,
        models,
        cycles_per_ns,
        cycles_note: "TSC at 2.00 GHz (invariant)".into(),
        warnings: vec![],
    }
}

#[test]
fn lab_remote_global() {
    let document = remote_global_document();
    golden_all(
        "lab_remote_global",
        &LabReport {
            document: &document,
            text: lab_text::remote_global,
            chart: lab_charts::remote_global,
        },
    );
}

/// Twelve runs of a workload: the three that started on node 1 (whose
/// `.bss` then lives there) ran at about 2/3 of the others' rate.
fn runs_rows() -> Vec<RunRow> {
    (0..12)
        .map(|index| {
            let slow = index % 5 == 1 || index == 6;
            let node = u32::from(slow);
            let metric = if slow { 32_100.0 } else { 48_100.0 } + (index as f64 * 37.0) % 300.0;
            let attributes: Attributes = [
                (RunAttribute::StartNode, node.to_string()),
                (RunAttribute::BssNode, node.to_string()),
                (RunAttribute::ExitCode, "0".to_string()),
            ]
            .into_iter()
            .collect();
            RunRow {
                index,
                start_cpu: node * 8 + index as u32 % 4,
                start_node: Some(node),
                metric,
                exit_code: Some(0),
                signal: None,
                wall_s: 2.0 + index as f64 / 100.0,
                attributes,
                counters: [("cpu_migrations".to_string(), 3 + index as u64 % 2)]
                    .into_iter()
                    .collect(),
                placement_sampled: index != 4,
                notes: if index == 4 {
                    vec!["exited before the settle time: placement not sampled".into()]
                } else {
                    vec![]
                },
            }
        })
        .collect()
}

#[test]
fn runs() {
    let rows = runs_rows();
    let metrics: Vec<f64> = rows.iter().map(|r| r.metric).collect();
    let attributes: Vec<_> = rows.iter().map(|r| r.attributes.clone()).collect();
    let analysis = numasleuth_analyze::runs::analyze(&metrics, &attributes, false);
    let command = ["./bench".to_string(), "--ops".to_string(), "1000000".to_string()];
    let report = RunsReport {
        command: &command,
        metric_name: "ops/s: ([0-9.]+)",
        from_output: true,
        lower_is_better: false,
        rows: &rows,
        analysis: &analysis,
        program: Some("/usr/local/bin/bench"),
        missing: &["heap_node: placement not sampled in 2 runs (they ended before the settle time)".to_string()],
    };
    golden_all("runs", &report);
}
