//! `serve` lists its series in one order on every scrape (label values in
//! order, numbers as numbers), and says which build answers
//! (`numasleuth_build_info{version,commit}`).

use std::path::Path;

use crate::common::numasleuth;

fn fixture(name: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/fixtures")
        .join(name)
        .to_string_lossy()
        .into_owned()
}

/// One `serve --once --textfile` exposition of the capture.
fn scrape(root: &str) -> String {
    let dir = tempfile::tempdir().unwrap();
    let output = numasleuth()
        .args(["--root", root, "serve", "--once", "--textfile"])
        .arg(dir.path())
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    std::fs::read_to_string(dir.path().join("numasleuth.prom")).unwrap()
}

/// Each sample's name and labels, in the order served.
fn series(text: &str) -> Vec<String> {
    text.lines()
        .filter(|l| !l.starts_with('#'))
        .map(|l| l.rsplit_once(' ').map_or(l, |(key, _)| key).to_string())
        .collect()
}

/// A copy of a fixture whose snapshot record also gives the base page
/// size: the fixtures predate that record, and without it `serve` leaves
/// out every series counted in pages (the watermarks) rather than assume
/// 4 KiB. Their guests were x86-64, whose base page is 4 KiB.
fn with_page_size(name: &str) -> tempfile::TempDir {
    let copy = tempfile::tempdir().unwrap();
    let status = std::process::Command::new("cp")
        .args(["-a", &format!("{}/.", fixture(name))])
        .arg(copy.path())
        .status()
        .unwrap();
    assert!(status.success());
    let manifest = copy.path().join("numasleuth-snapshot.json");
    let mut record: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&manifest).unwrap()).unwrap();
    record["base_page_bytes"] = 4096.into();
    std::fs::write(&manifest, record.to_string()).unwrap();
    copy
}

#[test]
fn every_scrape_lists_the_series_in_the_same_order() {
    let copy = with_page_size("qemu-four-nodes-asymmetric");
    let root = copy.path().to_string_lossy().into_owned();
    let first = series(&scrape(&root));
    assert!(first.len() > 30, "{first:?}");
    for _ in 0..3 {
        assert_eq!(series(&scrape(&root)), first);
    }
    // Within a family, by node then zone then level.
    let marks: Vec<&String> = first
        .iter()
        .filter(|s| s.starts_with("numasleuth_node_watermark_bytes{"))
        .collect();
    let mut sorted = marks.clone();
    sorted.sort_by_key(|s| {
        let value = |key: &str| {
            s.split(&format!("{key}=\""))
                .nth(1)
                .and_then(|v| v.split('"').next())
                .unwrap_or("")
                .to_string()
        };
        (
            value("node").parse::<u32>().unwrap_or(u32::MAX),
            value("zone"),
            value("level"),
        )
    });
    assert_eq!(marks, sorted);
    assert!(marks.len() >= 12, "{marks:?}");
}

#[test]
fn the_build_that_answers_is_a_metric() {
    let text = scrape(&fixture("kvm-2cpu-1node"));
    // The textfile is the Prometheus text 0.0.4: an info metric is a gauge.
    assert!(text.contains("# TYPE numasleuth_build_info gauge\n"), "{text}");
    let line = text
        .lines()
        .find(|l| l.starts_with("numasleuth_build_info{"))
        .unwrap_or_else(|| panic!("no build info in {text}"));
    let version = env!("CARGO_PKG_VERSION");
    assert!(
        line.starts_with(&format!("numasleuth_build_info{{version=\"{version}\",commit=\"")),
        "{line}"
    );
    assert!(line.ends_with("\"} 1"), "{line}");
    // The commit is the one `--version` names (empty outside a checkout).
    let long = String::from_utf8(numasleuth().arg("--version").output().unwrap().stdout).unwrap();
    let commit = line
        .split("commit=\"")
        .nth(1)
        .and_then(|c| c.split('"').next())
        .unwrap();
    assert!(
        commit.is_empty() || long.contains(&format!("(git {commit})")),
        "{line} vs {long}"
    );
}
