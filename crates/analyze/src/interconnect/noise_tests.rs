//! The interconnect verdict on matrices built from raw samples, as `mem`
//! builds them: noisy cells give at most an INFO that says it is
//! inconclusive; tight cells keep their verdict.

use numasleuth_model::{Node, NumaSource, Topology};
use numasleuth_parse::IdList;

use super::*;
use crate::mem::{bandwidth_grid, latency_grid};
use crate::timing::{ByteSamples, TimedSamples};

fn two_nodes() -> Topology {
    let node = |id: u32, distances: [u32; 2]| Node {
        id,
        cpus: IdList::new(vec![id]),
        memory_total_bytes: None,
        memory_free_bytes: None,
        hugetlb_bytes: None,
        distances: distances.into_iter().map(Some).collect(),
        has_memory: Some(true),
        access: Vec::new(),
    };
    Topology {
        numa: NumaSource::Sysfs,
        nodes: vec![node(0, [10, 21]), node(1, [21, 10])],
        ..Topology::default()
    }
}

/// A stream's raw samples: 10 ms each, moving `rates_gb_per_sec`.
fn stream(rates_gb_per_sec: &[f64]) -> ByteSamples {
    ByteSamples {
        elapsed_ns: vec![10_000_000; rates_gb_per_sec.len()],
        bytes: rates_gb_per_sec.iter().map(|r| (r * 1e9 * 0.01) as u64).collect(),
    }
}

/// A chase's raw samples: 1,000 loads each, at `ns_per_load`.
fn chase(ns_per_load: &[u64]) -> TimedSamples {
    TimedSamples {
        elapsed_ns: ns_per_load.iter().map(|ns| ns * 1000).collect(),
        timer_overhead_ns: 0.0,
        timer_reads_per_sample: 1,
        ops_per_sample: 1000,
    }
}

/// The 2×2 matrix `mem` derives from cells `[[0→0, 0→1], [1→0, 1→1]]`,
/// and its warnings.
fn bandwidth(cells: [[&ByteSamples; 2]; 2]) -> (NodeMatrix, Vec<String>) {
    let named = (0..2).flat_map(|r| (0..2).map(move |c| ((r, c), format!("node {r} → node {c}"))));
    let (grid, warnings) = bandwidth_grid((2, 2), named.map(|(at, name)| (at, name, cells[at.0][at.1])));
    (as_matrix(grid), warnings)
}

fn latency(cells: [[&TimedSamples; 2]; 2]) -> NodeMatrix {
    let named = (0..2).flat_map(|r| (0..2).map(move |c| ((r, c), format!("node {r} → node {c}"))));
    as_matrix(latency_grid((2, 2), named.map(|(at, name)| (at, name, cells[at.0][at.1]))).0)
}

fn as_matrix(cells: crate::mem::NodeGrid) -> NodeMatrix {
    NodeMatrix {
        initiators: vec![0, 1],
        targets: vec![0, 1],
        cells,
    }
}

fn first<'a>(verdict: &'a Interconnect, id: &str) -> &'a Finding {
    verdict
        .findings
        .iter()
        .find(|f| f.id == id)
        .unwrap_or_else(|| panic!("no {id}: {:#?}", verdict.findings))
}

/// The run of issue 33 on a two-node TCG guest: remote read bandwidth at
/// 22% of local (about 0.1 against 0.3 GB/s), every bandwidth cell
/// spread wider than 20%.
#[test]
fn the_noisy_guest_run_gives_no_warning_and_says_inconclusive() {
    let local = stream(&[0.30, 0.22, 0.38, 0.30, 0.26, 0.34, 0.18]);
    let remote = stream(&[0.066, 0.05, 0.09, 0.066, 0.04, 0.08, 0.07]);
    let (matrix, warnings) = bandwidth([[&local, &remote], [&remote, &local]]);
    assert!(
        warnings
            .iter()
            .any(|w| w.starts_with("4 of 4 bandwidth cells spread wider than 20%")),
        "{warnings:?}"
    );
    let verdict = judge(&two_nodes(), None, Some(&matrix), "read");
    let starved = first(&verdict, "interconnect-bandwidth");
    assert!(
        verdict.findings.iter().all(|f| f.severity == Severity::Info),
        "{:#?}",
        verdict.findings
    );
    assert_eq!(
        starved.title,
        "remote read bandwidth from node 0 to node 1 is 22% of local (inconclusive: spread 58%)"
    );
    let confidence = starved.confidence.expect("a measured finding has a confidence");
    assert!(!confidence.holds && !starved.holds());
    assert_eq!(confidence.samples, 7);
    assert!((confidence.spread_pct - 57.6).abs() < 0.1, "{confidence:?}");
    let spread = starved.evidence.iter().find_map(|e| e.values.float("spread_pct"));
    assert_eq!(spread, Some(confidence.spread_pct));
    assert!(
        starved.evidence_text().contains("it would be critical"),
        "{}",
        starved.evidence_text()
    );
}

/// The same ratio measured steadily keeps its CRITICAL.
#[test]
fn a_tight_starved_matrix_is_still_critical() {
    let local = stream(&[0.30, 0.301, 0.299, 0.30, 0.302, 0.298, 0.30]);
    let remote = stream(&[0.066, 0.067, 0.065, 0.066, 0.066, 0.0665, 0.0655]);
    let (matrix, warnings) = bandwidth([[&local, &remote], [&remote, &local]]);
    assert!(warnings.is_empty(), "{warnings:?}");
    let verdict = judge(&two_nodes(), None, Some(&matrix), "read");
    let starved = first(&verdict, "interconnect-bandwidth");
    assert_eq!(starved.severity, Severity::Critical);
    assert_eq!(
        starved.title,
        "remote read bandwidth from node 0 to node 1 is 22% of local"
    );
    let confidence = starved.confidence.expect("confidence");
    assert!(confidence.holds && starved.holds());
    assert!(confidence.spread_pct < 5.0, "{confidence:?}");
    assert!(starved.evidence.iter().all(|e| e.values.get("spread_pct").is_none()));
}

/// Emulator noise made remote memory look faster than local on an idle
/// guest: only an INFO now. The same inversion measured steadily stays a
/// WARNING.
#[test]
fn remote_beats_local_needs_steady_cells() {
    let local = chase(&[120, 90, 200, 110, 95, 180, 100]);
    let remote = chase(&[80, 70, 130, 75, 65, 125, 78]);
    let noisy = judge(
        &two_nodes(),
        Some(&latency([[&local, &remote], [&remote, &local]])),
        None,
        "read",
    );
    let inverted = first(&noisy, "remote-beats-local");
    assert_eq!(inverted.severity, Severity::Info);
    assert!(inverted.title.contains("(inconclusive: spread "), "{}", inverted.title);
    assert!(!inverted.holds());

    let local = chase(&[120, 121, 119, 120, 120, 122, 120]);
    let remote = chase(&[90, 91, 89, 90, 90, 90, 91]);
    let steady = judge(
        &two_nodes(),
        Some(&latency([[&local, &remote], [&remote, &local]])),
        None,
        "read",
    );
    let inverted = first(&steady, "remote-beats-local");
    assert_eq!(inverted.severity, Severity::Warning);
    assert!(inverted.holds() && !inverted.title.contains("inconclusive"));
}

/// The clean two-node TCG guest's figure: remote at 0.88× local with a 9%
/// spread. Steady, but within what two buffers on one node differ by: no
/// finding.
#[test]
fn a_small_steady_inversion_is_not_remote_beating_local() {
    let local = chase(&[434, 430, 440, 436, 428, 445, 433]);
    let remote = chase(&[382, 378, 390, 384, 375, 395, 381]);
    let verdict = judge(
        &two_nodes(),
        Some(&latency([[&local, &remote], [&remote, &local]])),
        None,
        "read",
    );
    assert!(
        verdict.findings.iter().all(|f| f.id != "remote-beats-local"),
        "{:#?}",
        verdict.findings
    );
}

/// The clean TCG guest's other run: remote bandwidth a steady 1.41× local.
/// On an emulated CPU no ratio between nodes describes a link: INFO, with
/// the reason; the same cells on a real CPU stay a WARNING.
#[test]
fn an_emulated_cpus_steady_inversion_is_only_info() {
    let local = stream(&[0.30, 0.31, 0.29, 0.30, 0.30]);
    let remote = stream(&[0.42, 0.43, 0.41, 0.42, 0.42]);
    let (matrix, _) = bandwidth([[&local, &remote], [&remote, &local]]);
    let real = judge(&two_nodes(), None, Some(&matrix), "read");
    assert_eq!(first(&real, "remote-beats-local").severity, Severity::Warning);
    let mut topo = two_nodes();
    topo.cpu_model = Some("QEMU TCG CPU version 2.5+".into());
    let emulated = judge(&topo, None, Some(&matrix), "read");
    let inverted = first(&emulated, "remote-beats-local");
    assert_eq!(inverted.severity, Severity::Info);
    assert!(inverted.title.ends_with("(emulated CPU)"), "{}", inverted.title);
    assert!(inverted.evidence_text().contains("(it would be warning, on hardware)"));
}

/// Two samples cannot show a spread: not enough to warn on.
#[test]
fn too_few_samples_do_not_hold() {
    let local = stream(&[0.30, 0.30]);
    let remote = stream(&[0.066, 0.066]);
    let (matrix, _) = bandwidth([[&local, &remote], [&remote, &local]]);
    let verdict = judge(&two_nodes(), None, Some(&matrix), "read");
    let starved = first(&verdict, "interconnect-bandwidth");
    assert_eq!(starved.severity, Severity::Info);
    assert_eq!(starved.confidence.map(|c| (c.samples, c.holds)), Some((2, false)));
}
