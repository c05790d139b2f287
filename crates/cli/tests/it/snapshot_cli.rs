//! `snapshot` and `--root`: a capture must replay to the same answer as the
//! machine it came from, and must hold nothing that takes kernel locks.

use crate::common;

use std::path::{Path, PathBuf};

use common::*;

fn live_json() -> serde_json::Value {
    let output = numasleuth().args(["topo", "--json"]).output().unwrap();
    assert!(output.status.success(), "{}", stderr(&output));
    serde_json::from_slice(&output.stdout).unwrap()
}

fn snapshot(args: &[&str], out: &Path) {
    let output = numasleuth()
        .args(args)
        .arg("snapshot")
        .arg("-o")
        .arg(out)
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", stderr(&output));
}

fn all_files(dir: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(at) = stack.pop() {
        for entry in std::fs::read_dir(&at).unwrap() {
            let entry = entry.unwrap();
            let kind = entry.file_type().unwrap();
            if kind.is_dir() {
                stack.push(entry.path());
            } else {
                found.push(entry.path());
            }
        }
    }
    found
}

#[test]
fn live_archive_round_trip_equals_live() {
    let dir = tempfile::tempdir().unwrap();
    let archive = dir.path().join("live.tar.gz");
    snapshot(&[], &archive);
    let replayed = topo_json(&archive);
    assert_eq!(without_volatile(replayed), without_volatile(live_json()));
}

#[test]
fn live_directory_snapshot_holds_no_lock_taking_files() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("live");
    snapshot(&[], &out);
    let files = all_files(&out);
    assert!(files.iter().any(|f| f.ends_with("proc/meminfo")));
    for forbidden in ["slabinfo", "kpageflags", "kcore"] {
        assert!(
            !files.iter().any(|f| f.to_string_lossy().contains(forbidden)),
            "{forbidden} captured"
        );
    }
    assert_eq!(without_volatile(topo_json(&out)), without_volatile(live_json()));
}

#[test]
fn snapshot_of_a_tree_replays_exactly() {
    let tree = tree_with(&[]);
    let dir = tempfile::tempdir().unwrap();
    let archive = dir.path().join("tree.tgz");
    snapshot(&["--root", tree.path().to_str().unwrap()], &archive);
    let (replayed, original) = (topo_json(&archive), topo_json(tree.path()));
    assert_eq!(without_volatile(replayed.clone()), without_volatile(original));
    // The replay says it read a snapshot, which one, and when it was taken.
    let provenance = &replayed["provenance"];
    assert_eq!(provenance["source"], "snapshot");
    assert_eq!(provenance["snapshot"]["path"], archive.to_str().unwrap());
    assert!(provenance["snapshot"]["created_utc"].as_str().unwrap().ends_with("UTC"));
}

#[test]
fn reports_say_where_they_came_from() {
    let tree = common::tree_with(&[
        ("proc/sys/kernel/hostname", Some("db7\n")),
        ("proc/sys/kernel/osrelease", Some("6.1.0-test\n")),
    ]);
    let root = tree.path().to_str().unwrap();
    let text = |args: &[&str]| {
        let out = numasleuth().args(["--root", root]).args(args).output().unwrap();
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    for args in [&["topo"][..], &["doctor"][..]] {
        let first = crate::common::provenance_and_report(&text(args)).0;
        assert!(
            first.starts_with(&format!("reading snapshot {root} of db7 (Linux 6.1.0-test) taken")),
            "{args:?}: {first}"
        );
    }
    let topo: serde_json::Value = serde_json::from_str(&text(&["topo", "--json"])).unwrap();
    let doctor: serde_json::Value = serde_json::from_str(&text(&["doctor", "--json"])).unwrap();
    for doc in [&topo, &doctor] {
        let p = &doc["provenance"];
        assert_eq!(
            (p["hostname"].as_str(), p["kernel_release"].as_str()),
            (Some("db7"), Some("6.1.0-test"))
        );
        assert_eq!(p["source"], "snapshot");
        assert!(p["numasleuth_version"]
            .as_str()
            .unwrap()
            .starts_with(env!("CARGO_PKG_VERSION")));
    }
    let dir = tempfile::tempdir().unwrap();
    let page = dir.path().join("r.html");
    let out = numasleuth()
        .args(["--root", root, "doctor", "--html"])
        .arg(&page)
        .output()
        .unwrap();
    assert!(out.status.success());
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(
        html.contains("<td>db7</td>") && html.contains("6.1.0-test") && html.contains("snapshot"),
        "{html}"
    );
    assert!(!html.contains("numasleuth doctor: numasleuth doctor"));
}

#[test]
fn snapshot_never_overwrites() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("taken");
    std::fs::write(&out, "precious").unwrap();
    let output = numasleuth().arg("snapshot").arg("-o").arg(&out).output().unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert!(stderr(&output).contains("refusing to overwrite"), "{}", stderr(&output));
    assert_eq!(std::fs::read_to_string(&out).unwrap(), "precious");
}

#[test]
fn corrupt_archive_root_is_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("bad.tar.gz");
    std::fs::write(&path, [0x1f, 0x8b, 0x08, 0x00, 0x00]).unwrap();
    let output = numasleuth().arg("--root").arg(&path).arg("topo").output().unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert!(
        stderr(&output).contains("not a directory or a readable .tar.gz snapshot"),
        "{}",
        stderr(&output)
    );
}
