//! `memwatch` output on a two-node tree: per-node lines without the
//! machine-wide reclaim counters, which appear once per sample as
//! machine-wide in text, JSON and the chart.

use crate::common;

use common::{host_tree_with, numasleuth, stderr};
use serde_json::Value;

fn memwatch(root: &std::path::Path, extra: &[&str]) -> String {
    let output = numasleuth()
        .arg("--root")
        .arg(root)
        .args(["memwatch", "--interval", "100ms", "--duration", "300ms"])
        .args(extra)
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", stderr(&output));
    String::from_utf8(output.stdout).unwrap()
}

#[test]
fn machine_wide_reclaim_is_reported_once_not_per_node() {
    let dir = host_tree_with(&[(
        "proc/vmstat",
        Some("pgscan_kswapd 5\npgscan_direct 0\nallocstall_normal 0\n"),
    )]);
    let text = memwatch(dir.path(), &[]);
    let node_lines: Vec<&str> = text.lines().filter(|l| l.contains(" node ")).collect();
    assert_eq!(node_lines.len(), 6, "{text}");
    assert!(node_lines.iter().all(|l| !l.contains("kswapd")), "{text}");
    assert_eq!(
        text.lines().filter(|l| l.contains("machine-wide: kswapd scan")).count(),
        3,
        "{text}"
    );

    let json = memwatch(dir.path(), &["--json"]);
    let samples: Vec<Value> = json.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(samples[0]["schema"], "numasleuth.memwatch/2");
    assert!(samples[0]["machine"]["kswapd_scan_per_sec"].is_number());
    assert!(samples[0]["nodes"][1]["kswapd_scan_per_sec"].is_null());
    assert_eq!(samples[0]["nodes"][1]["high_pages"], 1500);

    let out = tempfile::tempdir().unwrap();
    let svg = out.path().join("m.svg");
    memwatch(dir.path(), &["--svg", svg.to_str().unwrap()]);
    let chart = std::fs::read_to_string(&svg).unwrap();
    assert!(chart.contains("kswapd scan/s (machine-wide)") && chart.contains("node 1 low"));
}
