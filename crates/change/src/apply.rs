//! Applying and undoing a list of kernel file writes, all or nothing.

use std::path::Path;

use numasleuth_kernel::{IdList, ReadError, Root};
use thiserror::Error;

use crate::journal::{FileChange, Journal, MachineIdentity};

#[derive(Debug, Error)]
pub enum ChangeError {
    #[error("{path}: {why}")]
    Journal { path: String, why: String },
    #[error("{0}")]
    Read(#[from] ReadError),
    #[error("/{path} is `{found}`, not `{expected}` as planned; something else changed it, so nothing was written")]
    Drifted {
        path: String,
        expected: String,
        found: String,
    },
    #[error("journal {path} was written on another {what} ({theirs}, this is {ours}); refusing to undo")]
    OtherMachine {
        path: String,
        what: &'static str,
        theirs: String,
        ours: String,
    },
    #[error("writing /{path} failed: {cause}; rolled back the {rolled_back} change(s) already made")]
    RolledBack {
        path: String,
        cause: ReadError,
        rolled_back: usize,
    },
    #[error("/{path} reads `{found}` after writing `{wrote}`: the kernel refused the value; rolled back")]
    NotTaken { path: String, wrote: String, found: String },
    #[error(transparent)]
    Pages(#[from] numasleuth_kernel::pages::PagesError),
    #[error(transparent)]
    Process(numasleuth_kernel::procfs::process::ProcessError),
    #[error("process {pid} has exited: its pages are gone, so there is nothing to move")]
    ProcessGone { pid: u32 },
    #[error(
        "PID {pid} now belongs to another process (started at tick {now}, the journal's at tick {journal}); \
         refusing to move its pages"
    )]
    PidReused { pid: u32, journal: u64, now: u64 },
    #[error("no page moved: {why}; nothing changed and no journal was kept")]
    NothingMoved { why: String },
}

/// Kernel files normalise what they are given (`2,3` reads back as `2-3`),
/// so CPU lists compare as sets and everything else as trimmed text.
fn same_value(a: &str, b: &str) -> bool {
    let (a, b) = (a.trim(), b.trim());
    if a == b {
        return true;
    }
    matches!((IdList::parse(a), IdList::parse(b)), (Ok(x), Ok(y)) if x == y)
}

fn check_current(root: &Root, changes: &[(String, String)]) -> Result<(), ChangeError> {
    for (path, expected) in changes {
        let found = root.read(path)?;
        if !same_value(&found, expected) {
            return Err(ChangeError::Drifted {
                path: path.clone(),
                expected: expected.clone(),
                found: found.trim().to_string(),
            });
        }
    }
    Ok(())
}

/// Writes `(path, to, from)` in order; on any failure restores the ones
/// already written to `from`, newest first.
fn write_all_or_nothing(root: &Root, writes: &[(String, String, String)]) -> Result<(), ChangeError> {
    for (done, (path, to, _)) in writes.iter().enumerate() {
        let outcome = root.write(path, to).map_err(|cause| (cause, None)).and_then(|()| {
            let found = root.read(path).map_err(|e| (e, None))?;
            if same_value(&found, to) {
                Ok(())
            } else {
                Err((ReadError::malformed(path, "value not taken"), Some(found)))
            }
        });
        if let Err((cause, found)) = outcome {
            // Undo this write too: a refused value may have been half-taken.
            for (path, _, from) in writes[..=done].iter().rev() {
                let _ = root.write(path, from);
            }
            return Err(match found {
                Some(found) => ChangeError::NotTaken {
                    path: path.clone(),
                    wrote: to.clone(),
                    found: found.trim().to_string(),
                },
                None => ChangeError::RolledBack {
                    path: path.clone(),
                    cause,
                    rolled_back: done,
                },
            });
        }
    }
    Ok(())
}

/// Checks every `before`, writes the journal, then makes the changes.
pub fn apply(root: &Root, journal: &Journal, journal_path: &Path) -> Result<(), ChangeError> {
    let expected: Vec<_> = journal
        .changes
        .iter()
        .map(|c| (c.path.clone(), c.before.clone()))
        .collect();
    check_current(root, &expected)?;
    journal.save(journal_path)?;
    let writes: Vec<_> = journal
        .changes
        .iter()
        .map(|c: &FileChange| (c.path.clone(), c.after.clone(), c.before.clone()))
        .collect();
    let outcome = write_all_or_nothing(root, &writes);
    if outcome.is_err() {
        // Everything was rolled back: a journal of a change that did not
        // happen would only mislead a later `undo`.
        let _ = std::fs::remove_file(journal_path);
    }
    outcome
}

/// Refuses a journal written on another machine, host or boot.
pub(crate) fn check_machine(root: &Root, journal: &Journal, journal_path: &Path) -> Result<(), ChangeError> {
    let here = MachineIdentity::read(root);
    let path = journal_path.display().to_string();
    for (what, theirs, ours) in [
        ("machine", &journal.machine.machine_id, &here.machine_id),
        ("host", &journal.machine.hostname, &here.hostname),
        ("boot", &journal.machine.boot_id, &here.boot_id),
    ] {
        if let (Some(theirs), Some(ours)) = (theirs, ours) {
            if theirs != ours {
                return Err(ChangeError::OtherMachine {
                    path,
                    what,
                    theirs: theirs.clone(),
                    ours: ours.clone(),
                });
            }
        }
    }
    Ok(())
}

/// Restores every `before` of a journal made on this machine and boot.
pub fn undo(root: &Root, journal_path: &Path) -> Result<Journal, ChangeError> {
    let journal = Journal::load(journal_path)?;
    check_machine(root, &journal, journal_path)?;
    if !journal.page_moves.is_empty() {
        return Err(ChangeError::Journal {
            path: journal_path.display().to_string(),
            why: "a page-move journal has no file changes; undo it with `undo_any`".into(),
        });
    }
    let expected: Vec<_> = journal
        .changes
        .iter()
        .map(|c| (c.path.clone(), c.after.clone()))
        .collect();
    check_current(root, &expected)?;
    let writes: Vec<_> = journal
        .changes
        .iter()
        .rev()
        .map(|c| (c.path.clone(), c.before.clone(), c.after.clone()))
        .collect();
    write_all_or_nothing(root, &writes)?;
    Ok(journal)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    fn machine(root: &Root) -> MachineIdentity {
        MachineIdentity::read(root)
    }

    fn tree() -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        for irq in [30, 31] {
            let at = dir.path().join(format!("proc/irq/{irq}"));
            fs::create_dir_all(&at).unwrap();
            fs::write(at.join("smp_affinity_list"), "0-3\n").unwrap();
        }
        fs::create_dir_all(dir.path().join("proc/sys/kernel/random")).unwrap();
        fs::write(dir.path().join("proc/sys/kernel/random/boot_id"), "boot-a\n").unwrap();
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

    #[test]
    fn apply_then_undo_restores_exactly() {
        let dir = tree();
        let root = Root::directory(dir.path()).unwrap();
        let journal = Journal::new("irq-affinity", machine(&root), 0, changes());
        let path = dir.path().join("journal.json");
        apply(&root, &journal, &path).unwrap();
        assert_eq!(root.read("proc/irq/31/smp_affinity_list").unwrap(), "2");
        undo(&root, &path).unwrap();
        assert_eq!(root.read("proc/irq/30/smp_affinity_list").unwrap(), "0-3");
        assert_eq!(root.read("proc/irq/31/smp_affinity_list").unwrap(), "0-3");
    }

    #[test]
    fn drift_writes_nothing() {
        let dir = tree();
        let root = Root::directory(dir.path()).unwrap();
        fs::write(dir.path().join("proc/irq/31/smp_affinity_list"), "1\n").unwrap();
        let journal = Journal::new("irq-affinity", machine(&root), 0, changes());
        let path = dir.path().join("journal.json");
        let err = apply(&root, &journal, &path).unwrap_err().to_string();
        assert!(err.contains("not `0-3` as planned"), "{err}");
        assert_eq!(root.read("proc/irq/30/smp_affinity_list").unwrap(), "0-3\n");
        assert!(!path.exists(), "no journal for a change that never happened");
    }

    #[test]
    fn vanished_irq_rolls_back() {
        let dir = tree();
        let root = Root::directory(dir.path()).unwrap();
        let mut planned = changes();
        planned.push(FileChange {
            path: "proc/irq/99/smp_affinity_list".into(),
            before: "0-3".into(),
            after: "2".into(),
        });
        let journal = Journal::new("irq-affinity", machine(&root), 0, planned);
        let err = apply(&root, &journal, &dir.path().join("j.json"))
            .unwrap_err()
            .to_string();
        assert!(err.contains("irq/99/smp_affinity_list: not found"), "{err}");
        assert_eq!(root.read("proc/irq/30/smp_affinity_list").unwrap(), "0-3\n");
    }

    #[test]
    fn undo_on_another_boot_is_refused() {
        let dir = tree();
        let root = Root::directory(dir.path()).unwrap();
        let journal = Journal::new("irq-affinity", machine(&root), 0, changes());
        let path = dir.path().join("journal.json");
        apply(&root, &journal, &path).unwrap();
        fs::write(dir.path().join("proc/sys/kernel/random/boot_id"), "boot-b\n").unwrap();
        let err = undo(&root, &path).unwrap_err().to_string();
        assert!(err.contains("another boot"), "{err}");
        assert_eq!(root.read("proc/irq/30/smp_affinity_list").unwrap(), "2");
    }
}
