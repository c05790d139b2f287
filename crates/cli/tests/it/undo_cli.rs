//! `undo` as an attacker would drive it: journals that are forged, edited,
//! sealed with another key, owned by someone else, open to others, special
//! files, or huge must all be refused before anything is written; and a
//! genuine journal is still undone on the live system. Needs root (CI runs
//! as root): it writes a real IRQ's affinity (its own value back) and
//! chowns files to another user.

use crate::common;

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use common::{numasleuth, stderr};
use numasleuth_change::{FileChange, Journal, JournalKey, MachineIdentity, PageMove, KIND_IRQ};
use numasleuth_kernel::Root;

struct Setup {
    dir: tempfile::TempDir,
    state: PathBuf,
    key: JournalKey,
}

fn setup() -> Setup {
    common::require_root("it writes /proc/irq and chowns files");
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state");
    let key = JournalKey::load_or_create(&state).unwrap();
    Setup { dir, state, key }
}

impl Setup {
    fn undo(&self, journal: &Path) -> std::process::Output {
        numasleuth()
            .env("NUMASLEUTH_STATE_DIR", &self.state)
            .arg("undo")
            .arg(journal)
            .timeout(Duration::from_secs(20))
            .output()
            .unwrap()
    }

    fn refused(&self, journal: &Path, expected: &str) {
        let started = Instant::now();
        let output = self.undo(journal);
        let err = stderr(&output);
        assert_eq!(output.status.code(), Some(2), "{}: {err}", journal.display());
        assert!(err.starts_with("numasleuth: error: cannot undo"), "{err}");
        assert!(err.contains(expected), "expected `{expected}` in: {err}");
        assert_eq!(err.trim_end().lines().count(), 1, "one line: {err}");
        assert!(
            started.elapsed() < Duration::from_secs(15),
            "undo hung on {}",
            journal.display()
        );
    }

    fn save(&self, journal: &mut Journal, name: &str) -> PathBuf {
        let path = self.dir.path().join(name);
        journal.save(&path, &self.key).unwrap();
        path
    }
}

/// An IRQ whose affinity this machine lets root write, and its value.
fn writable_irq() -> (u32, String) {
    for entry in fs::read_dir("/proc/irq").unwrap().flatten() {
        let Ok(irq) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let path = entry.path().join("smp_affinity_list");
        let Ok(value) = fs::read_to_string(&path) else { continue };
        if fs::write(&path, value.trim()).is_ok() {
            return (irq, value.trim().to_string());
        }
    }
    panic!("no IRQ with a writable smp_affinity_list on this machine");
}

fn irq_journal(irq: u32, before: &str, after: &str) -> Journal {
    let change = FileChange {
        path: format!("proc/irq/{irq}/smp_affinity_list"),
        before: before.into(),
        after: after.into(),
    };
    Journal::new(KIND_IRQ, MachineIdentity::read(&Root::live()), 0, vec![change])
}

#[test]
fn a_genuine_journal_is_undone_live() {
    let s = setup();
    let (irq, value) = writable_irq();
    // Before and after are the current value: the undo is real, and leaves
    // the machine exactly as it was.
    let path = s.save(&mut irq_journal(irq, &value, &value), "irq.json");
    let output = s.undo(&path);
    assert!(output.status.success(), "{}", stderr(&output));
    let text = String::from_utf8_lossy(&output.stdout);
    assert!(text.contains(&format!("/proc/irq/{irq}/smp_affinity_list")), "{text}");
}

/// The attack this closes: edit a journal to point at any file whose
/// content is known, recompute the checksum, and let root write it.
#[test]
fn forged_and_edited_journals_are_refused_and_write_nothing() {
    let s = setup();
    let target = s.dir.path().join("precious");
    fs::write(&target, "2").unwrap();
    let (irq, value) = writable_irq();
    let mut genuine = irq_journal(irq, &value, &value);
    let path = s.save(&mut genuine, "genuine.json");
    let text = fs::read_to_string(&path).unwrap();

    let traversal = format!("proc/irq/{irq}/../../..{}", target.display());
    let cases = [
        (
            text.replace(&format!("proc/irq/{irq}/smp_affinity_list"), &traversal),
            "not a file numasleuth ever writes",
        ),
        (
            text.replace("\"path\": \"proc", "\"path\": \"/tmp/../proc"),
            "not a file numasleuth ever writes",
        ),
        (
            text.replace(&format!("\"before\": \"{value}\""), "\"before\": \"0\""),
            "seal does not verify",
        ),
        (
            text.replace("numasleuth.journal/2", "numasleuth.journal/1"),
            "unknown journal schema",
        ),
        (
            text.replace("\"seal\"", "\"checksum\": \"00\", \"seal\""),
            "unknown field",
        ),
        (
            text.replace("\"machine_id\": \"", "\"machine_id\": null, \"x\": \""),
            "corrupt journal",
        ),
        (
            text[..text.len() / 2].to_string(),
            "an --apply killed before it changed anything",
        ),
        (String::new(), "an --apply killed before it changed anything"),
        (
            // JSON escapes: serde's message quotes the field decoded, raw.
            text.replace("\"seal\"", "\"\\u001b]0;t\\u0007\u{202e}\": 1, \"seal\""),
            "unknown field",
        ),
        ("\u{1b}]0;pwned\u{7}\u{1b}[2J".to_string(), "corrupt journal"),
    ];
    for (i, (forged, expected)) in cases.iter().enumerate() {
        let path = s.dir.path().join(format!("forged-{i}.json"));
        fs::write(&path, forged).unwrap();
        s.refused(&path, expected);
        let err = stderr(&s.undo(&path));
        assert!(
            !err.contains(['\u{1b}', '\u{7}', '\u{202e}']),
            "an escape sequence reached the terminal: {err:?}"
        );
    }
    assert_eq!(fs::read_to_string(&target).unwrap(), "2");

    // Sealed with a key that is not this user's: written by someone else.
    let other = JournalKey::from_bytes([3; 32]);
    let path = s.dir.path().join("other-key.json");
    irq_journal(irq, &value, &value).save(&path, &other).unwrap();
    s.refused(&path, "seal does not verify");
}

#[test]
fn journals_others_could_have_written_are_refused() {
    let s = setup();
    let (irq, value) = writable_irq();
    let path = s.save(&mut irq_journal(irq, &value, &value), "mode.json");
    fs::set_permissions(&path, fs::Permissions::from_mode(0o666)).unwrap();
    s.refused(&path, "group or others could have edited it");

    let path = s.save(&mut irq_journal(irq, &value, &value), "owner.json");
    std::os::unix::fs::chown(&path, Some(65534), Some(65534)).unwrap();
    s.refused(&path, "belongs to uid 65534");

    let open = s.dir.path().join("open");
    fs::create_dir(&open).unwrap();
    let path = open.join("j.json");
    irq_journal(irq, &value, &value).save(&path, &s.key).unwrap();
    fs::set_permissions(&open, fs::Permissions::from_mode(0o777)).unwrap();
    s.refused(&path, "lets group or others replace the journal");

    let link = s.dir.path().join("link.json");
    std::os::unix::fs::symlink(s.dir.path().join("mode.json"), &link).unwrap();
    s.refused(&link, "is a symbolic link");
}

#[test]
fn special_and_huge_files_are_refused_without_hanging() {
    let s = setup();
    let fifo = s.dir.path().join("fifo.json");
    let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    // SAFETY: valid C string.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    s.refused(&fifo, "is a FIFO");
    s.refused(Path::new("/dev/zero"), "character device");
    s.refused(s.dir.path(), "is a directory");

    let huge = s.dir.path().join("huge.json");
    fs::File::create(&huge).unwrap().set_len(1 << 36).unwrap();
    s.refused(&huge, "larger than 16 MiB");

    // A small journal that claims 2^40 pages is refused from its counts,
    // before anything is sized from them.
    let page = PageMove {
        pid: std::process::id(),
        pid_start_time: 1,
        address: 0x10000,
        pages: 1 << 40,
        page_bytes: 4096,
        from_node: 0,
        to_node: 0,
    };
    let mut journal = Journal::pages(MachineIdentity::read(&Root::live()), 0, vec![page]);
    let path = s.dir.path().join("pages.json");
    assert!(
        journal.save(&path, &s.key).is_err(),
        "numasleuth never writes such a journal"
    );
    journal.seal = format!("hmac-sha256:{}", "0".repeat(64));
    fs::write(&path, serde_json::to_string(&journal).unwrap()).unwrap();
    fs::set_permissions(&path, fs::Permissions::from_mode(0o600)).unwrap();
    s.refused(&path, "more than the 16777216 a move may journal");
}

/// A key home that others can reach is refused: there the key is no
/// secret, whoever set the environment.
#[test]
fn a_key_others_can_read_is_refused() {
    let s = setup();
    let (irq, value) = writable_irq();
    let path = s.save(&mut irq_journal(irq, &value, &value), "j.json");
    fs::set_permissions(&s.state, fs::Permissions::from_mode(0o755)).unwrap();
    let output = s.undo(&path);
    assert_eq!(output.status.code(), Some(2));
    assert!(
        stderr(&output).contains("group or others can reach it"),
        "{}",
        stderr(&output)
    );
}

#[test]
fn another_user_cannot_undo_roots_journal() {
    let s = setup();
    let (irq, value) = writable_irq();
    let path = s.save(&mut irq_journal(irq, &value, &value), "root.json");
    // Let the other user reach the journal, so the refusal is about whose
    // it is, not about reaching it.
    fs::set_permissions(s.dir.path(), fs::Permissions::from_mode(0o755)).unwrap();
    fs::set_permissions(&path, fs::Permissions::from_mode(0o644)).unwrap();
    let home = tempfile::tempdir().unwrap();
    std::os::unix::fs::chown(home.path(), Some(65534), Some(65534)).unwrap();
    let output = std::process::Command::new("setpriv")
        .args(["--reuid=65534", "--regid=65534", "--clear-groups"])
        .env("HOME", home.path())
        .env_remove("NUMASLEUTH_STATE_DIR")
        .arg(assert_cmd::cargo::cargo_bin("numasleuth"))
        .arg("undo")
        .arg(&path)
        .output()
        .expect("setpriv (util-linux) runs");
    let err = stderr(&output);
    assert_eq!(output.status.code(), Some(2), "{err}");
    assert!(err.contains("belongs to uid 0"), "{err}");
}

/// The owner of a sticky directory may rename any entry in it, so a
/// journal in another user's sticky directory is refused, as an open one is.
#[test]
fn a_journal_in_another_users_sticky_directory_is_refused() {
    let s = setup();
    let (irq, value) = writable_irq();
    let theirs = s.dir.path().join("theirs");
    fs::create_dir(&theirs).unwrap();
    let path = theirs.join("j.json");
    irq_journal(irq, &value, &value).save(&path, &s.key).unwrap();
    std::os::unix::fs::chown(&theirs, Some(65534), Some(65534)).unwrap();
    fs::set_permissions(&theirs, fs::Permissions::from_mode(0o1777)).unwrap();
    s.refused(&path, "belongs to uid 65534");
}

/// After a move killed before it reached a page, undo leaves the page on
/// the node it came from and says the move never reached it, not that
/// something moved it since. The journal is the one the killed move would
/// have left: this test process's own page, "moved" from its node to the
/// next one.
#[test]
fn undo_tells_a_page_the_killed_move_never_reached() {
    use numasleuth_kernel::pages::{self, PageStatus};
    let s = setup();
    let size = pages::page_size_bytes() as usize;
    let buffer = vec![1u8; size * 2];
    let address = (buffer.as_ptr() as u64 + size as u64 - 1) & !(size as u64 - 1);
    let PageStatus::Node(node) = pages::query(0, &[address]).unwrap()[0] else {
        panic!("our own touched page is not resident");
    };
    let pid = std::process::id();
    let start = numasleuth_kernel::procfs::process::read_process_stat(&Root::live(), pid)
        .unwrap()
        .start_time_ticks
        .unwrap();
    let moves = vec![PageMove {
        pid,
        pid_start_time: start,
        address,
        pages: 1,
        page_bytes: size as u64,
        from_node: node,
        to_node: node + 1,
    }];
    let path = s.save(
        &mut Journal::pages(MachineIdentity::read(&Root::live()), 0, moves),
        "killed-move.json",
    );
    let output = s.undo(&path);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let text = String::from_utf8_lossy(&output.stdout);
    assert!(
        text.contains("1 page(s) were already on the node they came from"),
        "{text}"
    );
    assert!(text.contains("the move never reached them"), "{text}");
    assert!(!text.contains("AutoNUMA"), "{text}");
    drop(buffer);
}
