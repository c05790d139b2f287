//! `memwatch`: live, per-node lines without the machine-wide reclaim
//! counters, which appear once per sample as machine-wide in text, JSON and
//! the chart; on a snapshot (`--root`), its one instant at once, without
//! rates, in bytes only when the snapshot records its page size.

use crate::common;

use std::time::{Duration, Instant};

use common::{exit_2_stderr, host_tree_with, numasleuth, stderr};
use serde_json::Value;

fn memwatch(root: Option<&std::path::Path>, extra: &[&str]) -> String {
    let mut command = numasleuth();
    if let Some(root) = root {
        command.arg("--root").arg(root);
    }
    command.args(["memwatch", "--interval", "100ms"]);
    if !extra.contains(&"--duration") {
        command.args(["--duration", "300ms"]);
    }
    let output = command.args(extra).output().unwrap();
    assert!(output.status.success(), "{}", stderr(&output));
    String::from_utf8(output.stdout).unwrap()
}

#[test]
fn machine_wide_reclaim_is_reported_once_not_per_node() {
    let text = memwatch(None, &[]);
    let node_lines: Vec<&str> = text.lines().filter(|l| l.contains(" node ")).collect();
    let samples = text.lines().filter(|l| l.contains("machine-wide: kswapd scan")).count();
    assert_eq!(samples, 3, "{text}");
    assert!(node_lines.len() >= samples, "{text}");
    assert!(node_lines.iter().all(|l| !l.contains("kswapd")), "{text}");

    let json = memwatch(None, &["--json"]);
    let records: Vec<Value> = json.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(records[0]["schema"], "numasleuth.memwatch/2");
    assert!(records[0]["machine"]["kswapd_scan_per_sec"].is_number());
    assert!(records[0]["nodes"][0]["high_pages"].is_number());
    let summary = records.last().unwrap();
    assert_eq!(summary["type"], "summary");
    assert_eq!(summary["run"]["stopped_early"], false);

    let out = tempfile::tempdir().unwrap();
    let svg = out.path().join("m.svg");
    memwatch(None, &["--svg", svg.to_str().unwrap()]);
    let chart = std::fs::read_to_string(&svg).unwrap();
    assert!(chart.contains("kswapd scan/s (machine-wide)") && chart.contains("node 0 low"));
}

#[test]
fn a_snapshot_shows_its_one_instant_at_once_without_rates() {
    let dir = host_tree_with(&[(
        "proc/vmstat",
        Some("pgscan_kswapd 5\npgscan_direct 0\nallocstall_normal 0\n"),
    )]);
    let started = Instant::now();
    // A minute asked for, and nothing waited for: the snapshot has one
    // moment. (A hang guard, not a timing.)
    let text = memwatch(Some(dir.path()), &["--duration", "60s"]);
    assert!(started.elapsed() < Duration::from_secs(30));
    assert!(text.contains("one instant, from a snapshot: no rates"), "{text}");
    // No rate on a frozen tree (the first line is the provenance).
    assert!(text.lines().skip(1).all(|l| !l.contains("/s")), "{text}");
    // No page size recorded: counts stay in pages and it says why.
    assert!(text.contains("page size unknown"), "{text}");
    assert!(text.contains("node 1: free ") && !text.contains("MiB"), "{text}");
    assert!(text.contains("machine-wide since boot: kswapd scan 5"), "{text}");

    let json = memwatch(Some(dir.path()), &["--json"]);
    let doc: Value = serde_json::from_str(&json).unwrap();
    assert_eq!(doc["type"], "instant");
    assert!(doc["base_page_bytes"].is_null());
    assert_eq!(doc["nodes"][1]["high_pages"], 1500);

    // A snapshot that records its page size is shown in bytes.
    std::fs::write(
        dir.path().join("numasleuth-snapshot.json"),
        r#"{"base_page_bytes": 4096}"#,
    )
    .unwrap();
    let text = memwatch(Some(dir.path()), &[]);
    assert!(!text.contains("page size unknown") && text.contains("pages)"), "{text}");
    assert!(
        text.contains("MiB") || text.contains("KiB") || text.contains("GiB"),
        "{text}"
    );
}

#[test]
fn a_snapshot_has_no_time_series_to_chart() {
    let dir = host_tree_with(&[]);
    let root = dir.path().to_str().unwrap();
    let err = exit_2_stderr(&["--root", root, "memwatch", "--svg", "/tmp/never-written.svg"]);
    assert!(err.contains("holds one instant"), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
}
