//! A tree cut short is not a healthy machine: the four-node fixture with
//! its `sys/` removed, or with `sys/devices/system` emptied, once read as
//! "1 node(s) … No findings" with nothing unread, although its
//! `proc/zoneinfo` lists zones on nodes 0–3. The node and CPU directories
//! it lacks are now unread, the checks over them partial, and `--fail-on`
//! cannot pass.

use std::path::Path;

use crate::common::{doctor_json, numasleuth, stderr};

/// A copy of the four-node fixture in a temporary directory, with `cut`
/// (a path inside it) removed and, when `recreate`, made again empty.
fn cut_fixture(cut: &str, recreate: bool) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/qemu-four-nodes-asymmetric");
    let copied = std::process::Command::new("cp")
        .arg("-a")
        .arg(format!("{}/.", fixture.display()))
        .arg(dir.path())
        .status()
        .unwrap();
    assert!(copied.success());
    std::fs::remove_dir_all(dir.path().join(cut)).unwrap();
    if recreate {
        std::fs::create_dir_all(dir.path().join(cut)).unwrap();
    }
    dir
}

fn unread_paths(doc: &serde_json::Value) -> Vec<String> {
    doc["unread"]
        .as_array()
        .unwrap()
        .iter()
        .map(|u| u["path"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn a_tree_without_its_sys_says_it_is_incomplete() {
    for (cut, recreate) in [("sys", false), ("sys/devices/system", true)] {
        let tree = cut_fixture(cut, recreate);
        let (code, doc) = doctor_json(tree.path(), &[]);
        assert_eq!(code, Some(0), "{cut}: {doc:#}");
        let unread = unread_paths(&doc);
        for missing in ["/sys/devices/system/node", "/sys/devices/system/cpu"] {
            assert!(
                unread.iter().any(|p| p == missing),
                "{cut}: {missing} not unread: {unread:?}"
            );
        }
        let node_gap = &doc["unread"].as_array().unwrap()[0]["why"];
        let whys = doc["unread"].to_string();
        assert!(
            whys.contains("node(s) 0-3") && whys.contains("/proc/zoneinfo"),
            "{cut}: {node_gap}"
        );
        let incomplete = doc["checks_incomplete"].as_array().unwrap();
        assert!(
            incomplete.iter().any(|c| c == "free-memory-imbalance"),
            "{cut}: {incomplete:?}"
        );
        // A clean pass is not possible on it.
        let out = numasleuth()
            .arg("--root")
            .arg(tree.path())
            .args(["doctor", "--fail-on", "warning"])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(1), "{cut}: {}", stderr(&out));
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(text.contains("not a clean bill"), "{cut}: {text}");
    }
    // The whole fixture is complete: nothing of the kind is said.
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/qemu-four-nodes-asymmetric");
    let (_, doc) = doctor_json(&fixture, &[]);
    let unread = unread_paths(&doc);
    assert!(
        !unread.iter().any(|p| p.starts_with("/sys/devices/system")),
        "{unread:?}"
    );
}
