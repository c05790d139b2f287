//! `irq`, `--apply` and `undo` on synthetic trees: the plan, the journal,
//! and the refusals (no permission, corrupt journal, another boot) that
//! must leave every file as it was.

mod common;

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
fn audit_plan_apply_undo() {
    let dir = off_node_tree();
    let json: Value = serde_json::from_slice(&irq(dir.path(), &["--fix", "--json"]).stdout).unwrap();
    assert_eq!(json["schema"], "numasleuth.irq/1");
    assert_eq!(json["devices"][0]["irqs"][0]["off_node"], true);
    assert_eq!(json["plan"][0]["after"], "2-3");
    assert_eq!(json["applied"], false);
    assert_eq!(affinity(dir.path()), "0-3\n", "--fix alone must change nothing");

    let journal = dir.path().join("irq.journal.json");
    let output = irq(dir.path(), &["--apply", "--journal", journal.to_str().unwrap()]);
    assert!(output.status.success(), "{}", stderr(&output));
    let text = String::from_utf8_lossy(&output.stdout);
    assert!(
        text.contains("changed /proc/irq/40/smp_affinity_list (eth0): 0-3 -> 2-3"),
        "{text}"
    );
    assert_eq!(affinity(dir.path()), "2-3");

    let output = numasleuth()
        .arg("--root")
        .arg(dir.path())
        .arg("undo")
        .arg(&journal)
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", stderr(&output));
    assert_eq!(affinity(dir.path()), "0-3");
}

#[test]
fn undo_refuses_corrupt_or_foreign_journals() {
    let dir = off_node_tree();
    let journal = dir.path().join("irq.journal.json");
    assert!(irq(dir.path(), &["--apply", "--journal", journal.to_str().unwrap()])
        .status
        .success());
    let undo = || {
        numasleuth()
            .arg("--root")
            .arg(dir.path())
            .arg("undo")
            .arg(&journal)
            .output()
            .unwrap()
    };

    fs::write(dir.path().join("proc/sys/kernel/random/boot_id"), "boot-b\n").unwrap();
    let output = undo();
    assert_eq!(output.status.code(), Some(2));
    assert!(
        stderr(&output).contains("written on another boot"),
        "{}",
        stderr(&output)
    );
    assert_eq!(affinity(dir.path()), "2-3", "a refused undo writes nothing");

    fs::write(dir.path().join("proc/sys/kernel/random/boot_id"), "boot-a\n").unwrap();
    let text = fs::read_to_string(&journal).unwrap();
    fs::write(&journal, text.replace("\"2-3\"", "\"1\"")).unwrap();
    let output = undo();
    assert_eq!(output.status.code(), Some(2));
    assert!(stderr(&output).contains("corrupt journal"), "{}", stderr(&output));
    fs::write(&journal, &text[..text.len() / 3]).unwrap();
    assert!(stderr(&undo()).contains("corrupt journal"));
    assert_eq!(affinity(dir.path()), "2-3");
}

#[test]
fn apply_without_permission_changes_nothing() {
    if std::process::Command::new("setpriv").arg("--version").output().is_err() {
        eprintln!("SKIPPED apply_without_permission_changes_nothing: setpriv (util-linux) not installed");
        return;
    }
    let dir = off_node_tree();
    // World-readable so the unprivileged run can plan, but not writable.
    let bin = assert_cmd::cargo::cargo_bin("numasleuth");
    std::process::Command::new("chmod")
        .args(["-R", "a+rX"])
        .arg(dir.path())
        .status()
        .unwrap();
    std::process::Command::new("chmod")
        .args(["a+rx"])
        .arg(dir.path().parent().unwrap())
        .status()
        .unwrap();
    let journal = std::env::temp_dir().join(format!("numasleuth-noperm-{}.json", std::process::id()));
    let output = std::process::Command::new("setpriv")
        .args(["--reuid=65534", "--regid=65534", "--clear-groups"])
        .arg(&bin)
        .arg("--root")
        .arg(dir.path())
        .args(["irq", "--apply", "--journal"])
        .arg(&journal)
        .output()
        .unwrap();
    let err = stderr(&output);
    assert_eq!(output.status.code(), Some(2), "{err}");
    assert!(
        err.contains("permission denied") || err.contains("Permission denied"),
        "{err}"
    );
    assert_eq!(affinity(dir.path()), "0-3\n");
    assert!(!journal.exists(), "no journal may survive a rolled-back change");
}
