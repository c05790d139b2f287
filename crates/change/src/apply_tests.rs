//! Apply, rollback and undo on fixture trees, including the rollbacks a
//! real kernel reaches only under races, through a failing file layer.

use super::*;
use crate::journal::{FileChange, KIND_IRQ};
use std::cell::RefCell;
use std::collections::BTreeSet;
use std::fs;

fn key() -> JournalKey {
    JournalKey::from_bytes([9; 32])
}

fn tree() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for irq in [30, 31] {
        let at = dir.path().join(format!("proc/irq/{irq}"));
        fs::create_dir_all(&at).unwrap();
        fs::write(at.join("smp_affinity_list"), "0-3\n").unwrap();
    }
    fs::create_dir_all(dir.path().join("proc/sys/kernel/random")).unwrap();
    fs::create_dir_all(dir.path().join("etc")).unwrap();
    fs::write(dir.path().join("proc/sys/kernel/random/boot_id"), "boot-a\n").unwrap();
    fs::write(dir.path().join("proc/sys/kernel/hostname"), "host-a\n").unwrap();
    fs::write(dir.path().join("etc/machine-id"), "0123abcd\n").unwrap();
    dir
}

fn changes() -> Vec<FileChange> {
    [30, 31]
        .map(|irq| FileChange {
            path: format!("proc/irq/{irq}/smp_affinity_list"),
            before: "0-3".into(),
            after: "2".into(),
        })
        .to_vec()
}

fn journal(root: &Root) -> Journal {
    Journal::new(KIND_IRQ, MachineIdentity::read(root), 0, changes())
}

fn affinity(root: &Root, irq: u32) -> String {
    root.read(&format!("proc/irq/{irq}/smp_affinity_list"))
        .unwrap()
        .trim()
        .to_string()
}

/// A root whose writes of given values to given files fail.
struct Failing<'a> {
    root: &'a Root,
    refuse: RefCell<BTreeSet<(String, String)>>,
}

impl KernelFiles for Failing<'_> {
    fn read(&self, path: &str) -> Result<String, ReadError> {
        self.root.read(path)
    }
    fn write(&self, path: &str, value: &str) -> Result<(), ReadError> {
        if self.refuse.borrow().contains(&(path.to_string(), value.to_string())) {
            return Err(ReadError::Io {
                errno: None,
                path: format!("/{path}"),
                message: "Input/output error".into(),
            });
        }
        self.root.write(path, value)
    }
}

fn failing<'a>(root: &'a Root, refuse: &[(u32, &str)]) -> Failing<'a> {
    let refuse = refuse
        .iter()
        .map(|(irq, v)| (format!("proc/irq/{irq}/smp_affinity_list"), v.to_string()))
        .collect();
    Failing {
        root,
        refuse: RefCell::new(refuse),
    }
}

#[test]
fn apply_then_undo_restores_exactly() {
    let dir = tree();
    let root = Root::directory(dir.path()).unwrap();
    let path = dir.path().join("journal.json");
    apply(&root, &mut journal(&root), &path, &key()).unwrap();
    assert_eq!(affinity(&root, 31), "2");
    let (_, undone) = undo(&root, &path, &key()).unwrap();
    assert_eq!(undone.restored.len(), 2);
    assert_eq!((affinity(&root, 30), affinity(&root, 31)), ("0-3".into(), "0-3".into()));
}

#[test]
fn drift_writes_nothing_and_keeps_no_journal() {
    let dir = tree();
    let root = Root::directory(dir.path()).unwrap();
    fs::write(dir.path().join("proc/irq/31/smp_affinity_list"), "1\n").unwrap();
    let path = dir.path().join("journal.json");
    let err = apply(&root, &mut journal(&root), &path, &key())
        .unwrap_err()
        .to_string();
    assert!(err.contains("not `0-3` as planned"), "{err}");
    assert_eq!(affinity(&root, 30), "0-3");
    assert!(!path.exists(), "no journal for a change that never happened");
}

#[test]
fn a_failed_write_rolls_back_and_drops_the_journal() {
    let dir = tree();
    let root = Root::directory(dir.path()).unwrap();
    let path = dir.path().join("j.json");
    let err = apply_to(&failing(&root, &[(31, "2")]), &mut journal(&root), &path, &key()).unwrap_err();
    assert!(matches!(err, ChangeError::RolledBack { .. }), "{err}");
    assert!(err.to_string().contains("smp_affinity_list failed"), "{err}");
    assert_eq!((affinity(&root, 30), affinity(&root, 31)), ("0-3".into(), "0-3".into()));
    assert!(!path.exists());
}

#[test]
fn a_failed_rollback_names_what_is_left_and_keeps_the_journal() {
    let dir = tree();
    let root = Root::directory(dir.path()).unwrap();
    let path = dir.path().join("j.json");
    let files = failing(&root, &[(31, "2"), (30, "0-3")]);
    let err = apply_to(&files, &mut journal(&root), &path, &key()).unwrap_err();
    let ChangeError::LeftChanged { left_changed, .. } = &err else {
        panic!("{err}");
    };
    assert_eq!(left_changed, &["/proc/irq/30/smp_affinity_list (reads `2`, was `0-3`)"]);
    assert!(err.to_string().contains("LEFT CHANGED"), "{err}");
    assert!(path.exists(), "the journal is the only record of IRQ 30's change");
    // Once the cause is gone, undo restores what is left and skips what
    // the rollback already restored.
    let (_, undone) = undo(&root, &path, &key()).unwrap();
    assert_eq!(undone.restored, ["proc/irq/30/smp_affinity_list"]);
    assert_eq!(undone.already_restored, ["proc/irq/31/smp_affinity_list"]);
    assert_eq!(affinity(&root, 30), "0-3");
}

#[test]
fn a_failed_undo_names_what_is_left() {
    let dir = tree();
    let root = Root::directory(dir.path()).unwrap();
    let path = dir.path().join("j.json");
    let mut journal = journal(&root);
    apply(&root, &mut journal, &path, &key()).unwrap();
    // Undo runs newest first: 31 goes back, 30 fails, 31 cannot return.
    let files = failing(&root, &[(30, "0-3"), (31, "2")]);
    let err = undo_files_to(&files, &journal, &path).unwrap_err();
    assert!(matches!(err, ChangeError::LeftChanged { .. }), "{err}");
    assert!(
        err.to_string()
            .contains("irq/31/smp_affinity_list (reads `0-3`, was `2`)"),
        "{err}"
    );
    assert!(path.exists());
}

#[test]
fn undo_refuses_drift_without_writing() {
    let dir = tree();
    let root = Root::directory(dir.path()).unwrap();
    let path = dir.path().join("j.json");
    apply(&root, &mut journal(&root), &path, &key()).unwrap();
    fs::write(dir.path().join("proc/irq/30/smp_affinity_list"), "1\n").unwrap();
    let err = undo(&root, &path, &key()).unwrap_err().to_string();
    assert!(err.contains("something else changed it"), "{err}");
    assert_eq!(affinity(&root, 31), "2");
}

#[test]
fn undo_on_another_boot_or_host_is_refused() {
    for (file, other) in [
        ("proc/sys/kernel/random/boot_id", "boot-b"),
        ("proc/sys/kernel/hostname", "host-b"),
    ] {
        let dir = tree();
        let root = Root::directory(dir.path()).unwrap();
        let path = dir.path().join("journal.json");
        apply(&root, &mut journal(&root), &path, &key()).unwrap();
        fs::write(dir.path().join(file), other).unwrap();
        let err = undo(&root, &path, &key()).unwrap_err().to_string();
        assert!(err.contains("another"), "{err}");
        assert_eq!(affinity(&root, 30), "2");
    }
}

#[test]
fn a_system_without_identity_is_never_changed() {
    let dir = tree();
    fs::remove_file(dir.path().join("etc/machine-id")).unwrap();
    let root = Root::directory(dir.path()).unwrap();
    let path = dir.path().join("journal.json");
    let err = apply(&root, &mut journal(&root), &path, &key())
        .unwrap_err()
        .to_string();
    assert!(err.contains("no machine id"), "{err}");
    assert_eq!(affinity(&root, 30), "0-3");
    assert!(!path.exists());
}
