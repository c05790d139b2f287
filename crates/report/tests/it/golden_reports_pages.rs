//! Golden tests of the page- and thread-level reports (`move`, `bisect`,
//! `hotlines`, `migrations`):
//! one hand-built two-node document each, text at 80 and 200 columns and
//! JSON. `INSTA_UPDATE=always cargo test -p numasleuth-report --test
//! golden_reports_pages` rewrites them after a deliberate change.

use crate::common;

use std::collections::BTreeMap;

use numasleuth_model::hex::Hex;

use common::golden_all;
use numasleuth_analyze::bisect::document::{BisectDocument, CulpritPage, Restore, StepRecord};
use numasleuth_analyze::bisect::{Readings, VerdictKind};
use numasleuth_analyze::hotlines::{HotLine, LineSymbolUse, NamedLine};
use numasleuth_analyze::migrations::{self, Method, MigrationsDocument, NumaBalancing, TaskNuma, ThreadPath};
use numasleuth_analyze::move_document::{Applied, MoveDocument};
use numasleuth_analyze::page_move::{PageRun, Target, VmaPages};
use numasleuth_parse::pages::Residency;
use numasleuth_report::bisect_json;
use numasleuth_report::export::TextJson;
use numasleuth_report::hotlines_json::{self, HotlinesDocument};
use numasleuth_report::move_json;
use numasleuth_report::{bisect_text, hotlines_text, migrations_json, migrations_text, move_text};

fn by_node(counts: &[(u32, u64)]) -> BTreeMap<String, u64> {
    counts.iter().map(|(n, c)| (n.to_string(), *c)).collect()
}

fn run(start: u64, pages: u64, node: Option<u32>, state: Option<Residency>) -> PageRun {
    PageRun {
        start,
        pages,
        node,
        state,
    }
}

fn heap() -> Target {
    Target {
        what: "[heap]".into(),
        object: None,
        start: 0x55d4c6a00000,
        end: 0x55d4c6e00000,
    }
}

/// Moving a 4 MiB heap to node 1: 700 pages on node 0 moved, one run in a
/// hinting fault, one left swapped out, and numa_maps agreeing afterwards.
fn move_document() -> MoveDocument {
    let base = 0x55d4_c6a0_0000_u64;
    MoveDocument {
        pid: 4242,
        comm: "postgres".into(),
        to_node: 1,
        to_node_has_cpus: true,
        page_bytes: 4096,
        targets: vec![heap()],
        pages_total: 1024,
        pages_by_node: by_node(&[(0, 700), (1, 300)]),
        already_there: 300,
        not_present: 16,
        swapped_out: 4,
        zero_page: 2,
        unmapped: 0,
        query_failed: 0,
        hinting_faults: 2,
        hinting: vec![run(base + 0x1000, 2, None, Some(Residency::HintingFault))],
        pages_to_move: 700,
        to_move: vec![run(base, 1, Some(0), None), run(base + 0x3000, 699, Some(0), None)],
        numa_maps_before: vec![VmaPages {
            span: 0x55d4c6a00000..0x55d4c6e00000,
            pages_by_node: vec![(0, 702), (1, 300)],
        }],
        numa_maps_after: Some(vec![VmaPages {
            span: 0x55d4c6a00000..0x55d4c6e00000,
            pages_by_node: vec![(0, 2), (1, 1000)],
        }]),
        applied: Some(Applied {
            journal: "/var/lib/numasleuth/journal/move-4242.json".into(),
            attempted: 702,
            verified: 700,
            revealed: 2,
            not_moved: vec![run(base + 0x1000, 2, None, Some(Residency::SwappedOut))],
            numa_maps_gained: 700,
            numa_maps_agrees: true,
        }),
        notes: vec![
            "2 pages were in a NUMA hinting fault; they were touched first so move_pages could see them".into(),
        ],
    }
}

#[test]
fn move_report() {
    let doc = move_document();
    golden_all(
        "move",
        &TextJson::new(move_json::document(&doc), |layout| move_text::render(&doc, layout)),
    );
}

fn readings(values: &[f64]) -> Readings {
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    Readings {
        values: values.to_vec(),
        median: sorted[sorted.len() / 2],
        min: sorted[0],
        max: sorted[sorted.len() - 1],
    }
}

fn step(first_address: u64, pages: u64, values: &[f64], change: f64) -> StepRecord {
    let readings = readings(values);
    StepRecord {
        first_address: Hex(first_address),
        pages,
        pages_moved: pages,
        metric: readings.median,
        readings,
        change,
        threshold: 0.1,
        changed: change.abs() >= 0.1,
        separated: change.abs() >= 0.1,
        pairs_beyond: if change.abs() >= 0.1 { 1.0 } else { 0.0 },
        batches: 1,
        baseline_readings: 12,
        recheck: false,
    }
}

/// Bisecting 64 heap pages with a throughput metric: the half with the hot
/// counter drops throughput by a third, narrowing to one page.
fn bisect_document() -> BisectDocument {
    BisectDocument {
        pid: 4242,
        comm: "postgres".into(),
        targets: vec![heap()],
        metric_cmd: "curl -s localhost:9187/tps".into(),
        lower_is_better: false,
        settle_ms: 500,
        rounds: 3,
        min_change: 0.1,
        batches_max: 3,
        page_bytes: 4096,
        candidate_pages: 64,
        left_out: [("already on node 1".to_string(), 12)].into_iter().collect(),
        applied: true,
        baseline: Some(readings(&[
            48_100.0, 48_400.0, 47_900.0, 48_000.0, 48_300.0, 48_200.0, 48_100.0, 47_900.0, 48_000.0, 48_200.0,
            48_400.0, 47_800.0,
        ])),
        steps: vec![
            // A noisy first batch (two readings low, one high) took two more
            // batches, and the baseline three more readings after each.
            StepRecord {
                pairs_beyond: 0.4,
                batches: 3,
                ..step(
                    0x55d4c6a00000,
                    32,
                    &[
                        41_800.0, 52_200.0, 44_000.0, 48_000.0, 47_900.0, 48_300.0, 48_100.0, 48_200.0, 47_800.0,
                    ],
                    -0.002,
                )
            },
            step(0x55d4c6a20000, 32, &[31_900.0, 32_400.0, 32_100.0], -0.335),
            step(0x55d4c6a20000, 16, &[32_000.0, 32_300.0, 31_700.0], -0.335),
            step(0x55d4c6a2f000, 1, &[32_200.0, 31_800.0, 32_000.0], -0.335),
        ],
        verdict: Some(VerdictKind::Page),
        culprit_pages: vec![CulpritPage {
            address: "0x55d4c6a2f000".into(),
            home_node: 0,
            away_node: 1,
            symbols: vec!["stats_counter".into()],
            symbol_details: vec!["stats_counter (64 bytes, .bss of /usr/lib/postgresql/bin/postgres)".into()],
            object: Some("/usr/lib/postgresql/bin/postgres".into()),
        }],
        restored: true,
        restore: Some(Restore {
            pages: 64,
            home: 64,
            sent_home_at_end: 32,
            still_away: 0,
            elsewhere: 0,
        }),
        // Every page is home again, so the journal was removed.
        journal: None,
        stopped: None,
        sets_moved: 6,
        metric_period_ms: Some(1000),
        reading_spacing_ms: Some(1000),
        notes: vec![
            "12 pages already on node 1 were left out".into(),
            "readings were taken 1000 ms apart: the metric's value changed every 1000 ms (median) over 19 readings \
             while the baseline settled"
                .into(),
        ],
    }
}

#[test]
fn bisect() {
    let doc = bisect_document();
    golden_all(
        "bisect",
        &TextJson::new(bisect_json::document(&doc), |layout| bisect_text::render(&doc, layout)),
    );
}

fn symbol_use(name: &str, reads: u64, writes: u64, threads: &[u32]) -> LineSymbolUse {
    LineSymbolUse {
        name: name.into(),
        reads,
        writes,
        threads: threads.to_vec(),
    }
}

/// A line as analyze ranks and names it; the per-thread tallies stay out
/// of the document.
fn named(address: u64, names: (&[&str], &str), counts: [u64; 4], who: [&[u32]; 4], reasons: &[&str]) -> NamedLine {
    let [samples, writes, reads, read_modify_writes] = counts;
    let [threads, writer_threads, cpus, nodes] = who;
    NamedLine {
        line: HotLine {
            address,
            samples,
            reads,
            writes,
            read_modify_writes,
            threads: threads.to_vec(),
            writer_threads: writer_threads.to_vec(),
            cpus: cpus.to_vec(),
            nodes: nodes.to_vec(),
            contended: !reasons.is_empty(),
            reasons: reasons.iter().map(|r| r.to_string()).collect(),
            per_thread: BTreeMap::new(),
            per_node: BTreeMap::new(),
            thread_nodes: BTreeMap::new(),
            untracked: 0,
        },
        symbols: names.0.iter().map(|n| n.to_string()).collect(),
        region: names.1.into(),
        symbol_use: vec![],
        false_sharing: false,
    }
}

/// Two lines: one falsely shared by writers on both nodes, one read-mostly.
fn hotlines_document() -> HotlinesDocument {
    let mut shared = named(
        0x55d4_c5e0_1040,
        (&["counter_a", "counter_b"], ".bss of /usr/bin/app"),
        [912, 610, 302, 540],
        [&[4243, 4244], &[4243, 4244], &[0, 8], &[0, 1]],
        &["written by 2 threads on 2 nodes"],
    );
    shared.false_sharing = true;
    shared.symbol_use = vec![
        symbol_use("counter_a", 150, 300, &[4243]),
        symbol_use("counter_b", 152, 310, &[4244]),
    ];
    let mut read_mostly = named(
        0x55d4_c5e0_2000,
        (&["config"], ".data of /usr/bin/app"),
        [120, 0, 120, 0],
        [&[4243, 4244, 4245], &[], &[0, 1, 8], &[0, 1]],
        &[],
    );
    read_mostly.symbol_use = vec![symbol_use("config", 120, 0, &[4243, 4244, 4245])];
    HotlinesDocument {
        pid: 4242,
        method: "software page faults + breakpoints".into(),
        duration_s: 5.0,
        samples: 1210,
        no_memory_samples: 31,
        unknown_share: 0.03,
        unknown: [("stack".to_string(), 20), ("anonymous".to_string(), 11)]
            .into_iter()
            .collect(),
        threads_sampled: 3,
        process_exited: false,
        precise_available: vec![],
        lines: vec![shared, read_mostly],
        next_step: Some("confirm with `numasleuth watch -p 4242 --symbol counter_a`".into()),
        notes: vec!["no precise memory sampling (PEBS/IBS) here; addresses come from page faults".into()],
    }
}

#[test]
fn hotlines() {
    let doc = hotlines_document();
    golden_all(
        "hotlines",
        &TextJson::new(hotlines_json::document(&doc), |_| hotlines_text::render(&doc)),
    );
}

/// One thread hopping between nodes every ~100 ms for 2 s, one staying
/// put, AutoNUMA on; the findings come from analyze as the command's do.
#[test]
fn migrations() {
    let hops: Vec<(u32, u32)> = (0..20).map(|i| if i % 2 == 0 { (1, 9) } else { (9, 1) }).collect();
    let paths = vec![
        ThreadPath {
            tid: 4243,
            comm: "worker".into(),
            moves: hops.len() as u64,
            path: hops,
        },
        ThreadPath {
            tid: 4244,
            comm: "logger".into(),
            moves: 1,
            path: vec![(2, 3)],
        },
    ];
    let node_of: BTreeMap<u32, u32> = (0..16).map(|cpu| (cpu, cpu / 8)).collect();
    let duration_s = 2.0;
    let threads = migrations::summarize(&paths, &node_of, duration_s);
    let numa = NumaBalancing {
        mode: Some(1),
        tasks: vec![TaskNuma {
            tid: 4243,
            numa_preferred_nid: Some(1),
            numa_pages_migrated: Some(5_120),
            total_numa_faults: Some(20_480),
            mems_allowed: Some("0-1".into()),
        }],
        pages_migrated_before: Some(100_000),
        pages_migrated_after: Some(105_120),
    };
    let method = Method::Tracepoint;
    let findings = migrations::findings(4242, &threads, &numa, &method, duration_s);
    let notes = vec!["threads that started during the run are counted from their first move".to_string()];
    let document = MigrationsDocument {
        pid: Some(4242),
        method,
        duration_s,
        threads,
        numa,
        findings,
        notes,
    };
    golden_all(
        "migrations",
        &TextJson::new(migrations_json::document(&document), |layout| {
            migrations_text::render(&document, layout)
        }),
    );
}
