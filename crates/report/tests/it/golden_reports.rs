//! Golden tests of the measuring reports (`mem`, `c2c`, `probe-latency`):
//! one hand-built two-node document each, in every format its exporter
//! offers, text at 60, 80 and 120 columns. A renderer change shows up as a
//! reviewable diff; `INSTA_UPDATE=always cargo test -p numasleuth-report
//! --test it golden_reports::` rewrites them after a deliberate change.

use crate::common;

use common::{golden_all, summary};
use numasleuth_analyze::c2c_document::{C2cDocument, C2cMethod};
use numasleuth_analyze::interconnect::{Interconnect, Ratio};
use numasleuth_analyze::latency_check;
use numasleuth_analyze::latency_spikes::{Bucket, Spike};
use numasleuth_analyze::mem_document::{
    BandwidthMatrix, LatencyMatrix, Loaded, LoadedPoint, MeasuredAgain, MemDocument, PlacementCheck, Sweep, SweepPoint,
};
use numasleuth_analyze::memwatch::{Event, EventKind};
use numasleuth_analyze::readers::summarize;
use numasleuth_analyze::siblings::{self, SuspectedSiblings};
use numasleuth_analyze::spike_readers::attach;
use numasleuth_analyze::working_set::{self, SizedFrom, WorkingSet};
use numasleuth_model::readers::{Ancestor, LockFile, Method, Open, ReaderProcess, ReadersRaw, Target};
use numasleuth_report::measure_export::{C2cReport, MemReport};
use numasleuth_report::probe_latency::{self, ProbeReaders, ProbeReport};

const GIB: f64 = 1024.0 * 1024.0 * 1024.0;

/// The rule's choice for `threads` threads from a 64 MiB L3 shared by the
/// CPUs of node 0 (0-7): 256 MiB in all.
fn rule_set(threads: u64) -> WorkingSet {
    let l3 = SizedFrom {
        cache: "L3".into(),
        bytes: 64 << 20,
        cpus: "0-7".into(),
        factor: 4,
        count: 1,
    };
    working_set::choose(Some(l3), &[], threads, None)
}

/// Local ~92 ns / 18 GiB/s, remote ~141 ns / 9 GiB/s, every buffer verified
/// on its node, and one noisy remote bandwidth cell warned about.
pub(crate) fn mem_document() -> MemDocument {
    let mut doc = MemDocument::new();
    doc.latency_ns = Some(LatencyMatrix {
        nodes: vec![0, 1],
        initiators: vec![0, 1],
        cpus: vec![0, 8],
        buffer_bytes: 256 << 20,
        working_set: rule_set(1),
        matrix: vec![
            vec![Some(summary(92.4, 1.2)), Some(summary(141.7, 3.1))],
            vec![Some(summary(143.0, 2.8)), Some(summary(91.8, 0.9))],
        ],
        self_check: Some(latency_check::check(
            256 << 20,
            &summary(92.4, 1.2),
            512 << 20,
            &summary(95.0, 1.0),
        )),
        self_check_skipped: None,
        size_search: Vec::new(),
        size_search_note: None,
    });
    doc.bandwidth_bytes_per_sec = Some(BandwidthMatrix {
        nodes: vec![0, 1],
        initiators: vec![0, 1],
        cpus: vec![vec![0, 1, 2, 3], vec![8, 9, 10, 11]],
        mix: "read",
        non_temporal_stores: false,
        buffer_bytes_per_thread: 64 << 20,
        working_set: rule_set(4),
        matrix: vec![
            vec![
                Some(summary(18.2 * GIB, 0.3 * GIB)),
                Some(summary(9.1 * GIB, 2.4 * GIB)),
            ],
            vec![Some(summary(9.4 * GIB, 0.4 * GIB)), None],
        ],
    });
    doc.latency_sweep = Some(Sweep {
        cpu: 0,
        node: 1,
        points: [(32 << 10, 1.4), (1 << 20, 4.9), (32 << 20, 38.0), (256 << 20, 141.7)]
            .into_iter()
            .map(|(size_bytes, ns)| SweepPoint {
                size_bytes,
                latency_ns: Some(summary(ns, ns / 50.0)),
            })
            .collect(),
    });
    doc.loaded_latency = Some(Loaded {
        latency_cpu: 0,
        load_cpus: vec![1, 2, 3],
        node: 1,
        chase_working_set: rule_set(1),
        load_working_set: rule_set(3),
        points: [(0, 8.9, 180.5), (200, 6.1, 152.0), (2000, 1.2, 143.1)]
            .into_iter()
            .map(|(delay_ns, gib_per_s, ns)| LoadedPoint {
                delay_ns,
                bandwidth_bytes_per_sec: Some(summary(gib_per_s * GIB, 0.1 * GIB)),
                latency_ns: Some(summary(ns, 2.0)),
            })
            .collect(),
    });
    doc.cycles_per_ns = Some(2.1);
    doc.cycles_note = "TSC at 2.10 GHz (invariant)".into();
    doc.timer_overhead_ns = Some(18.5);
    doc.page_kind = "base".into();
    doc.placement_verified = true;
    doc.placements = (0..2)
        .map(|node| PlacementCheck {
            what: format!("latency buffer on node {node}"),
            node,
            pages_checked: 65_536,
            pages_on_node: 65_536,
            verified: true,
            note: None,
        })
        .collect();
    doc.interconnect = Interconnect {
        ratios: vec![Ratio {
            initiator: 0,
            target: 1,
            latency_ratio: Some(141.7 / 92.4),
            bandwidth_ratio: Some(9.1 / 18.2),
            slit_ratio: Some(2.1),
        }],
        findings: Vec::new(),
    };
    doc.warnings = vec!["bandwidth node 0 → node 1 is noisy: p10–p90 spread 53% of the median".into()];
    // Measured twice more, and still noisy.
    doc.measured_again = vec![MeasuredAgain {
        matrix: "bandwidth",
        initiator: 0,
        node: 1,
        times: 2,
    }];
    doc
}

#[test]
fn mem() {
    golden_all("mem", &MemReport(&mem_document()));
}

/// Four CPUs over two nodes: ~40 ns within a node, ~130 ns across.
fn c2c_document() -> C2cDocument {
    let cpus = vec![0, 1, 8, 9];
    let node = |cpu: u32| u32::from(cpu >= 8);
    let latency_ns = cpus
        .iter()
        .map(|&a| {
            cpus.iter()
                .map(|&b| match (a == b, node(a) == node(b)) {
                    (true, _) => None,
                    (false, true) => Some(summary(40.0 + f64::from(a + b), 1.5)),
                    (false, false) => Some(summary(130.0 + f64::from(a + b), 6.0)),
                })
                .collect()
        })
        .collect();
    C2cDocument {
        cpus,
        home_node: 0,
        method: C2cMethod::Cas,
        sampling: "node",
        latency_ns,
        transfers_per_sample: 1000,
        timer_overhead_ns: Some(18.5),
        cycles_per_ns: Some(2.1),
        cycles_note: "TSC at 2.10 GHz (invariant)".into(),
        placement_verified: true,
        // As if CPUs 8 and 9 had answered far faster than their package's
        // other pairs: how a suspected pair is shown.
        suspected_siblings: vec![SuspectedSiblings {
            cpus: [8, 9],
            latency_ns: 21.5,
            median_ns: 57.0,
            kind: siblings::PairKind::SamePackage,
            message: siblings::message([8, 9], 21.5, 57.0, siblings::PairKind::SamePackage),
        }],
        warnings: vec!["CPU 8 ↔ CPU 9: p10–p90 spread 24% of the median; rerun on a quieter machine".into()],
        raw_latency_ns: None,
        raw_timing: None,
    }
}

#[test]
fn c2c() {
    golden_all("c2c", &C2cReport(&c2c_document()));
}

fn probe_summary(p50_ns: u64, max_ns: u64) -> probe_latency::Summary {
    probe_latency::Summary {
        percentiles_ns: vec![p50_ns, p50_ns * 2, p50_ns * 8, p50_ns * 40, max_ns / 2],
        min_ns: p50_ns / 3,
        max_ns,
        mean_ns: p50_ns as f64 * 1.4,
        stdev_ns: p50_ns as f64 * 3.0,
    }
}

/// `ss -s`, child of `node-agent`, opening /proc/slabinfo at 1.1229 s and
/// 1.9 s (the first 2.1 ms before the stall), and a process reading its own
/// smaps (left out).
fn probe_readers() -> ProbeReaders {
    let open = |t_s: f64, pid: u32, file: LockFile, target: Target| Open {
        t_s,
        pid,
        tid: pid,
        file,
        target,
    };
    let raw = ReadersRaw {
        method: Method::Kprobe,
        files: LockFile::ALL.to_vec(),
        duration_s: 2.004,
        opens: vec![
            open(1.1229, 4242, LockFile::Slabinfo, Target::System),
            open(1.5, 77, LockFile::Smaps, Target::Own),
            open(1.9, 4250, LockFile::Slabinfo, Target::System),
        ],
        opens_dropped: 0,
        processes: [4242, 4250]
            .into_iter()
            .map(|pid| ReaderProcess {
                pid,
                comm: "ss".into(),
                cmdline: Some("ss -s".into()),
                parents: vec![Ancestor {
                    pid: 4000,
                    comm: "node-agent".into(),
                }],
            })
            .collect(),
        targets: vec![],
        lost_records: 0,
        notes: vec![],
    };
    ProbeReaders {
        summary: summarize(&raw),
        raw,
    }
}

/// 2 s of alloc-touch at 1000/s with one 41 ms stall that coincides with
/// kswapd on node 0 and with a read of /proc/slabinfo.
fn probe_report() -> ProbeReport {
    let buckets = (0..4)
        .map(|i| Bucket {
            start_s: f64::from(i) * 0.5,
            count: 500,
            max_corrected_ns: if i == 2 { 41_000_000 } else { 60_000 },
            max_uncorrected_ns: if i == 2 { 9_500_000 } else { 45_000 },
            max_at_s: f64::from(i) * 0.5 + 0.125,
        })
        .collect();
    let readers = probe_readers();
    let mut spikes = vec![Spike {
        t_s: 1.125,
        latency_ns: 41_000_000,
        percentile: Some("99.9".into()),
        coincident_events: vec!["node 0 free fell below low watermark; kswapd woke (12 ms earlier)".into()],
        readers: vec![],
    }];
    attach(&mut spikes, &readers.raw, 1.0);
    ProbeReport {
        op: "alloc-touch (64 KiB bound to node 0)".into(),
        rate_per_sec: 1000,
        duration_s: 2.0,
        wall_s: 2.004,
        samples: 2000,
        not_issued: 3,
        interrupted: false,
        corrected: probe_summary(4_200, 41_000_000),
        uncorrected: probe_summary(3_900, 9_500_000),
        bucket_s: 0.5,
        buckets,
        spikes,
        signal_samples: 20,
        signal_interval_s: 0.1,
        signal_events: 1,
        events: vec![Event {
            t_s: 1.113,
            node: Some(0),
            kind: EventKind::UnderLow,
            message: "node 0 free fell below low watermark; kswapd woke".into(),
        }],
        signal_notes: vec!["/proc/vmstat pgscan counters are per machine, not per node".into()],
        readers: Some(readers),
        readers_note: None,
    }
}

#[test]
fn probe_latency() {
    golden_all("probe_latency", &probe_report());
}

/// The stored golden files themselves, so a snapshot accepted in a hurry
/// cannot carry debug output either (JSON keeps `null`, so it is skipped).
#[test]
fn no_golden_file_holds_rust_debug_output() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/snapshots");
    let scanned = common::debug_output::scan_snapshots(&dir);
    // Text at two widths for each of 14 reports, 2 CSV files and 6 SVG charts.
    assert!(scanned >= 36, "only {scanned} golden files found in {}", dir.display());
}
