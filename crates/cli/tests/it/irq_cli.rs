//! `irq`, `--apply` and `undo` on synthetic trees: the plan, the journal,
//! and the refusals (no permission, corrupt journal, another boot) that
//! must leave every file as it was.

use crate::common;

use std::fs;
use std::path::Path;

use common::*;
use serde_json::Value;

fn off_node_tree() -> tempfile::TempDir {
    host_tree_with(&[
        ("proc/irq/40/smp_affinity_list", Some("0-3\n")),
        ("proc/irq/40/effective_affinity_list", Some("0\n")),
        ("proc/sys/kernel/random/boot_id", Some("boot-a\n")),
    ])
}

fn affinity(root: &Path) -> String {
    fs::read_to_string(root.join("proc/irq/40/smp_affinity_list")).unwrap()
}

fn irq(root: &Path, args: &[&str]) -> std::process::Output {
    numasleuth()
        .arg("--root")
        .arg(root)
        .arg("irq")
        .args(args)
        .output()
        .unwrap()
}

#[test]
fn audit_and_plan_change_nothing() {
    let dir = off_node_tree();
    let json: Value = serde_json::from_slice(&irq(dir.path(), &["--fix", "--json"]).stdout).unwrap();
    assert_eq!(json["schema"], "numasleuth.irq/1");
    assert_eq!(json["devices"][0]["irqs"][0]["off_node"], true);
    assert_eq!(json["plan"][0]["after"], "2-3");
    assert_eq!(json["applied"], false);
    assert_eq!(affinity(dir.path()), "0-3\n", "--fix alone must change nothing");
}

/// A snapshot is a record of a system, not one to change: `--apply` and
/// `undo` under `--root` are refused before anything is read or written.
#[test]
fn apply_and_undo_under_root_are_refused() {
    let dir = off_node_tree();
    let journal = dir.path().join("irq.journal.json");
    let output = irq(dir.path(), &["--apply", "--journal", journal.to_str().unwrap()]);
    assert_eq!(output.status.code(), Some(2));
    let err = stderr(&output);
    assert!(
        err.starts_with("numasleuth: error: irq --apply changes the live system"),
        "{err}"
    );
    assert_eq!(affinity(dir.path()), "0-3\n");
    assert!(!journal.exists());

    fs::write(&journal, "{}").unwrap();
    let output = numasleuth()
        .arg("--root")
        .arg(dir.path())
        .arg("undo")
        .arg(&journal)
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert!(
        stderr(&output).contains("undo changes the live system"),
        "{}",
        stderr(&output)
    );
}
