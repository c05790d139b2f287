//! A snapshot answers `irq` and `doctor` exactly as the tree it was taken
//! from: every fixture under tests/fixtures (and the healthy host tree,
//! whose NIC raises an MSI-X vector) is treated as the live root with
//! `--root DIR`, snapshotted to an archive, and read back. A file some
//! reader opens but the snapshot does not keep shows up as a difference
//! here; `msi_irqs/*` once did, so a NIC in a snapshot had no IRQs.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::common::{healthy_host_files, numasleuth, stderr, two_node_files, write_tree};

fn fixtures() -> Vec<PathBuf> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures");
    let mut trees: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir())
        .collect();
    trees.sort();
    assert!(trees.len() >= 6, "fixtures missing: {trees:?}");
    trees
}

/// `command --json` on `root`, without its provenance (when and from
/// where differ by design; the machine must not).
fn report(root: &Path, command: &str) -> Value {
    let output = numasleuth()
        .arg("--root")
        .arg(root)
        .args([command, "--json"])
        .output()
        .unwrap();
    let mut doc: Value = serde_json::from_slice(&output.stdout)
        .unwrap_or_else(|e| panic!("{command} on {}: {e}: {}", root.display(), stderr(&output)));
    doc.as_object_mut().unwrap().remove("provenance");
    doc
}

/// Vectors `irq --json` found across the devices of `doc`.
fn vectors(doc: &Value) -> usize {
    doc["devices"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["irqs"].as_array().map_or(0, Vec::len))
        .sum()
}

#[test]
fn irq_and_doctor_on_a_snapshot_equal_the_tree_it_came_from() {
    let host = tempfile::tempdir().unwrap();
    let mut files = two_node_files();
    files.extend(healthy_host_files());
    write_tree(host.path(), &files);
    let out = tempfile::tempdir().unwrap();
    let mut trees = fixtures();
    trees.push(host.path().to_path_buf());
    let mut msi_vectors = 0;
    for (n, tree) in trees.iter().enumerate() {
        let archive = out.path().join(format!("{n}.tar.gz"));
        let made = numasleuth()
            .arg("--root")
            .arg(tree)
            .arg("snapshot")
            .arg("-o")
            .arg(&archive)
            .output()
            .unwrap();
        assert!(made.status.success(), "{}: {}", tree.display(), stderr(&made));
        for command in ["irq", "doctor"] {
            let (direct, replayed) = (report(tree, command), report(&archive, command));
            assert_eq!(replayed, direct, "{command} on a snapshot of {}", tree.display());
        }
        if tree.join("sys/bus/pci").exists() && has_msi_files(tree) {
            msi_vectors += vectors(&report(&archive, "irq"));
        }
    }
    // Without a tree whose devices raise MSI vectors from files, this test
    // could not see them lost.
    assert!(msi_vectors > 0, "no tree here has msi_irqs/N files with IRQs");
}

/// Whether any PCI function in `tree` has a file under `msi_irqs/`.
fn has_msi_files(tree: &Path) -> bool {
    let mut stack = vec![tree.join("sys/devices")];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let kind = entry.file_type().unwrap();
            if kind.is_dir() {
                stack.push(entry.path());
            } else if kind.is_file() && dir.ends_with("msi_irqs") && entry.file_name() != ".numasleuth-keep" {
                return true;
            }
        }
    }
    false
}
