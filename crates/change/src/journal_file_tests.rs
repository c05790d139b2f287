//! A kill at every step of writing a journal, and every cut-off file an
//! older numasleuth's kill could leave: what `undo` and a rerun make of
//! each. No timing: the write is stopped after exactly N steps.

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use super::*;
use crate::journal::{records_nothing, Journal, MachineIdentity, KILLED_BEFORE_CHANGE};
use crate::{FileChange, JournalKey, KIND_IRQ};

fn key() -> JournalKey {
    JournalKey::from_bytes([7; 32])
}

fn journal() -> Journal {
    let machine = MachineIdentity {
        machine_id: Some("m".into()),
        hostname: Some("h".into()),
        boot_id: Some("b".into()),
    };
    let changes = (30..40)
        .map(|irq| FileChange {
            path: format!("proc/irq/{irq}/smp_affinity_list"),
            before: "0-3".into(),
            after: "2".into(),
        })
        .collect();
    Journal::new(KIND_IRQ, machine, 1, changes)
}

fn private_dir() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    fs::set_permissions(dir.path(), fs::Permissions::from_mode(0o700)).unwrap();
    dir
}

/// The real file system until `steps` operations have run; then the
/// process is "killed": the operation in progress does half its work (a
/// write puts half its bytes on disk) and nothing after it happens, the
/// clean-up included.
struct KilledAfter {
    steps: usize,
    done: usize,
}

impl KilledAfter {
    fn step(&mut self) -> std::io::Result<()> {
        self.done += 1;
        if self.done > self.steps {
            return Err(std::io::Error::other("killed"));
        }
        Ok(())
    }
}

impl JournalFs for KilledAfter {
    fn create(&mut self, path: &Path) -> std::io::Result<fs::File> {
        self.step()?;
        RealFs.create(path)
    }
    fn write(&mut self, file: &mut fs::File, bytes: &[u8]) -> std::io::Result<()> {
        if self.step().is_err() {
            let _ = RealFs.write(file, &bytes[..bytes.len() / 2]);
            return Err(std::io::Error::other("killed"));
        }
        RealFs.write(file, bytes)
    }
    fn sync(&mut self, file: &fs::File) -> std::io::Result<()> {
        self.step()?;
        RealFs.sync(file)
    }
    fn link(&mut self, from: &Path, to: &Path) -> std::io::Result<()> {
        self.step()?;
        RealFs.link(from, to)
    }
    fn unlink(&mut self, path: &Path) -> std::io::Result<()> {
        self.step()?;
        RealFs.unlink(path)
    }
    fn sync_dir(&mut self, dir: &Path) -> std::io::Result<()> {
        self.step()?;
        RealFs.sync_dir(dir)
    }
}

/// Kills a journal write after every possible number of steps, with no
/// file at the path before, or with an empty one an older kill left: the
/// steps are create, write, sync, (unlink the empty file,) link, unlink
/// the temporary name, sync the directory.
#[test]
fn a_kill_at_every_step_leaves_no_journal_or_the_whole_one() {
    for stale in [false, true] {
        let (linked_at, steps_in_all) = if stale { (5, 7) } else { (4, 6) };
        for steps in 0..=steps_in_all {
            let dir = private_dir();
            let path = dir.path().join("irq.json");
            if stale {
                fs::write(&path, "").unwrap();
                fs::set_permissions(&path, fs::Permissions::from_mode(0o600)).unwrap();
            }
            let mut killed = KilledAfter { steps, done: 0 };
            let saved = journal().save_with(&mut killed, &path, &key());
            assert_eq!(saved.is_ok(), steps == steps_in_all, "after {steps} steps: {saved:?}");
            check_what_is_left(&path, steps >= linked_at, stale && steps < linked_at - 1);
            // Whatever else is left is a temporary name no step reads.
            for entry in fs::read_dir(dir.path()).unwrap() {
                let name = entry.unwrap().file_name().into_string().unwrap();
                assert!(name == "irq.json" || name.ends_with(".numasleuth-tmp"), "{name}");
            }
        }
    }
}

/// `linked`: the new journal is in place; `empty_left`: the empty file
/// from before still is. A rerun with the same path must work unless a
/// whole journal is there, which it must never replace.
fn check_what_is_left(path: &Path, linked: bool, empty_left: bool) {
    match fs::symlink_metadata(path) {
        Err(e) => {
            assert_eq!(e.kind(), std::io::ErrorKind::NotFound);
            assert!(
                !linked && !empty_left,
                "no file, yet linked {linked}, empty left {empty_left}"
            );
        }
        Ok(_) if empty_left => {
            let err = Journal::load(path, &key()).unwrap_err().to_string();
            assert!(err.contains(KILLED_BEFORE_CHANGE), "{err}");
        }
        Ok(_) => {
            assert!(linked, "a journal in place before it was linked");
            assert_eq!(Journal::load(path, &key()).unwrap().changes.len(), 10);
            let again = journal().save(path, &key()).unwrap_err().to_string();
            assert!(again.contains("already exists; refusing to replace it"), "{again}");
            return;
        }
    }
    journal().save(path, &key()).unwrap();
    assert_eq!(Journal::load(path, &key()).unwrap().changes.len(), 10);
}

/// What a kill left when journals were written in place: every prefix of
/// a real journal, the empty file included. `undo` names it for what it is,
/// and a rerun replaces it; the whole journal is never replaced.
#[test]
fn a_cut_off_journal_is_a_run_that_changed_nothing() {
    let dir = private_dir();
    let whole_path = dir.path().join("whole.json");
    journal().save(&whole_path, &key()).unwrap();
    let whole = fs::read_to_string(&whole_path).unwrap();
    let path = dir.path().join("cut.json");
    for len in (0..whole.len()).filter(|len| whole.is_char_boundary(*len)) {
        let _ = fs::remove_file(&path);
        fs::write(&path, &whole[..len]).unwrap();
        fs::set_permissions(&path, fs::Permissions::from_mode(0o600)).unwrap();
        assert!(records_nothing(&whole[..len]), "{len} bytes");
        let err = Journal::load(&path, &key()).unwrap_err().to_string();
        assert!(err.contains(KILLED_BEFORE_CHANGE), "{len} bytes: {err}");
        assert!(!err.contains("corrupt"), "{err}");
        // A rerun replaces it (each save syncs twice: a sample of lengths).
        if len % 97 == 0 || len + 1 == whole.len() {
            journal().save(&path, &key()).unwrap();
            assert_eq!(Journal::load(&path, &key()).unwrap().changes.len(), 10);
        }
    }
    assert!(!records_nothing(&whole));
}

/// Only a file that records nothing, and is ours, is replaced: malformed
/// text, another journal, or a file others could have written are not.
#[test]
fn nothing_else_is_replaced() {
    let dir = private_dir();
    let path = dir.path().join("j.json");
    for (text, mode, says) in [
        ("not json at all", 0o600, "may be the only record"),
        ("{\"schema\": 1}", 0o600, "may be the only record"),
        ("", 0o666, "group or others could have edited"),
    ] {
        let _ = fs::remove_file(&path);
        fs::write(&path, text).unwrap();
        fs::set_permissions(&path, fs::Permissions::from_mode(mode)).unwrap();
        let err = journal().save(&path, &key()).unwrap_err().to_string();
        assert!(err.contains(says), "{text:?}: {err}");
        assert_eq!(fs::read_to_string(&path).unwrap(), text);
    }
    let link = dir.path().join("link.json");
    std::os::unix::fs::symlink(dir.path().join("nowhere"), &link).unwrap();
    assert!(journal().save(&link, &key()).is_err());
    assert!(!dir.path().join("nowhere").exists());
}
