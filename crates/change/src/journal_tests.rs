//! The journal as an attacker would write it: every way of steering what
//! `undo` writes must be refused before anything is written.

use super::*;
use std::fs;

fn key() -> JournalKey {
    JournalKey::from_bytes([42; 32])
}

fn machine() -> MachineIdentity {
    MachineIdentity {
        machine_id: Some("abc".into()),
        hostname: Some("host".into()),
        boot_id: Some("boot".into()),
    }
}

fn sample() -> Journal {
    let change = FileChange {
        path: "proc/irq/30/smp_affinity_list".into(),
        before: "0-3".into(),
        after: "2".into(),
    };
    Journal::new(KIND_IRQ, machine(), 1, vec![change])
}

fn page_move() -> PageMove {
    PageMove {
        pid: 42,
        pid_start_time: 777,
        address: 0x4000,
        pages: 2,
        page_bytes: 4096,
        from_node: 1,
        to_node: 0,
    }
}

fn saved(journal: &mut Journal) -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("j.json");
    journal.save(&path, &key()).unwrap();
    (dir, path)
}

fn load_err(path: &Path) -> String {
    Journal::load(path, &key()).unwrap_err().to_string()
}

#[test]
fn round_trip_and_no_overwrite() {
    let mut journal = sample();
    let (_dir, path) = saved(&mut journal);
    assert!(journal.seal.starts_with(SEAL_PREFIX));
    assert_eq!(Journal::load(&path, &key()).unwrap(), journal);
    assert!(sample().save(&path, &key()).is_err(), "must not overwrite");
    use std::os::unix::fs::PermissionsExt;
    assert_eq!(fs::metadata(&path).unwrap().permissions().mode() & 0o777, 0o600);
}

#[test]
fn an_edit_with_a_recomputed_checksum_is_refused() {
    let mut journal = sample();
    let (_dir, path) = saved(&mut journal);
    // The old attack: edit, then recompute a plain digest. Without the key
    // the seal cannot follow the edit.
    let mut edited = journal.clone();
    edited.changes[0].before = "0-1".into();
    edited.seal = format!(
        "{SEAL_PREFIX}{}",
        JournalKey::from_bytes([0; 32]).seal(&edited.sealed_bytes())
    );
    fs::write(&path, serde_json::to_string(&edited).unwrap()).unwrap();
    assert!(load_err(&path).contains("seal does not verify"));
}

#[test]
fn another_users_key_does_not_verify() {
    let mut journal = sample();
    let (_dir, path) = saved(&mut journal);
    let err = Journal::load(&path, &JournalKey::from_bytes([1; 32]))
        .unwrap_err()
        .to_string();
    assert!(err.contains("seal does not verify"), "{err}");
}

#[test]
fn version_1_and_truncated_journals_are_refused() {
    let mut journal = sample();
    let (_dir, path) = saved(&mut journal);
    let text = fs::read_to_string(&path).unwrap();
    fs::write(&path, text.replace(SCHEMA, "numasleuth.journal/1")).unwrap();
    assert!(load_err(&path).contains("unknown journal schema"));
    // Cut off: what a kill left when journals were written in place.
    fs::write(&path, &text[..text.len() / 2]).unwrap();
    assert!(load_err(&path).contains(KILLED_BEFORE_CHANGE));
    fs::write(&path, text.replace("\"seal\"", "\"extra\": 1, \"seal\"")).unwrap();
    assert!(load_err(&path).contains("unknown field"));
}

#[test]
fn targets_outside_the_closed_set_are_refused() {
    for path in [
        "etc/shadow",
        "proc/irq/30/../../../etc/shadow",
        "proc/irq/30/smp_affinity",
        "proc/irq/030/smp_affinity_list",
        "proc/irq/-1/smp_affinity_list",
        "proc/irq//smp_affinity_list",
        "proc/irq/99999999/smp_affinity_list",
        "/proc/irq/30/smp_affinity_list",
        "proc/sys/vm/zone_reclaim_mode",
        "proc/irq/3 0/smp_affinity_list",
    ] {
        let mut journal = sample();
        journal.changes[0].path = path.into();
        let err = journal.validate().unwrap_err().to_string();
        assert!(err.contains("not a file numasleuth ever writes"), "{path}: {err}");
        assert!(journal.save(Path::new("/nonexistent/j"), &key()).is_err());
    }
    assert!(is_writable_target("proc/irq/0/smp_affinity_list"));
    assert!(is_writable_target("proc/irq/1234567/smp_affinity_list"));
}

#[test]
fn values_must_be_cpu_lists() {
    for value in ["", "all", "0-3\nextra", "\u{1b}[2J", "3-1"] {
        let mut journal = sample();
        journal.changes[0].after = value.into();
        let err = journal.validate().unwrap_err().to_string();
        assert!(err.contains("not a CPU list"), "{value:?}: {err}");
        assert!(!err.contains('\u{1b}'), "escape reached the message: {err:?}");
    }
}

#[test]
fn identity_is_mandatory() {
    for strip in 0..3 {
        let mut journal = sample();
        match strip {
            0 => journal.machine.machine_id = None,
            1 => journal.machine.hostname = Some(String::new()),
            _ => journal.machine.boot_id = None,
        }
        let err = journal.validate().unwrap_err().to_string();
        assert!(err.contains("cannot be tied to this machine"), "{err}");
    }
}

#[test]
fn unknown_and_mixed_kinds_are_refused() {
    let mut journal = sample();
    journal.kind = "sysctl".into();
    assert!(journal
        .validate()
        .unwrap_err()
        .to_string()
        .contains("not one numasleuth makes"));
    let mut journal = sample();
    journal.page_moves.push(page_move());
    assert!(matches!(journal.validate(), Err(JournalError::MixedKinds { .. })));
    let journal = Journal::new(KIND_IRQ, machine(), 1, Vec::new());
    assert!(journal
        .validate()
        .unwrap_err()
        .to_string()
        .contains("records 0 changes"));
}

#[test]
fn page_moves_are_sealed_and_bounded() {
    let mut journal = Journal::pages(machine(), 1, vec![page_move()]);
    let (_dir, path) = saved(&mut journal);
    assert_eq!(Journal::load(&path, &key()).unwrap(), journal);
    let text = fs::read_to_string(&path).unwrap();
    fs::write(&path, text.replace("\"from_node\": 1", "\"from_node\": 2")).unwrap();
    assert!(load_err(&path).contains("seal does not verify"));

    let cases: Vec<(PageMove, &str)> = vec![
        (
            PageMove {
                pages: 1 << 40,
                ..page_move()
            },
            "more than the",
        ),
        (
            PageMove {
                pages: u64::MAX,
                ..page_move()
            },
            "user space",
        ),
        (
            PageMove {
                pages: 0,
                ..page_move()
            },
            "user space",
        ),
        (
            PageMove {
                address: 0x4001,
                ..page_move()
            },
            "page-aligned",
        ),
        (
            PageMove {
                address: !0xfff,
                ..page_move()
            },
            "user space",
        ),
        (
            PageMove {
                page_bytes: 4095,
                ..page_move()
            },
            "not a page size",
        ),
        (
            PageMove {
                page_bytes: 0,
                ..page_move()
            },
            "not a page size",
        ),
        (PageMove { pid: 0, ..page_move() }, "not a possible PID"),
        (
            PageMove {
                to_node: 1 << 20,
                ..page_move()
            },
            "beyond any kernel",
        ),
    ];
    for (m, expected) in cases {
        let err = Journal::pages(machine(), 1, vec![m.clone()])
            .validate()
            .unwrap_err()
            .to_string();
        assert!(err.contains(expected), "{m:?}: {err}");
    }
    let other = PageMove { pid: 43, ..page_move() };
    let err = Journal::pages(machine(), 1, vec![page_move(), other])
        .validate()
        .unwrap_err()
        .to_string();
    assert!(err.contains("more than one process"), "{err}");
    // Many runs that each pass add up past the cap.
    let runs: Vec<PageMove> = (0..4u64)
        .map(|i| PageMove {
            address: i << 40,
            pages: MAX_JOURNAL_PAGES / 2,
            ..page_move()
        })
        .collect();
    assert!(matches!(
        Journal::pages(machine(), 1, runs).validate(),
        Err(JournalError::TooManyPages { .. })
    ));
}
