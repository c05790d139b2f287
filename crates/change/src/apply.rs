//! Applying and undoing a list of kernel file writes, all or nothing, and
//! saying exactly what is left when "nothing" cannot be restored.

use std::path::Path;

use numasleuth_kernel::{IdList, ReadError, Root};
use thiserror::Error;

use crate::error::{JournalRefusal, KeyError};
use crate::journal::{Journal, MachineIdentity};
use crate::seal::JournalKey;

#[derive(Debug, Error)]
pub enum ChangeError {
    #[error("{path}: {why}")]
    Journal { path: String, why: JournalRefusal },
    #[error("journal key {path}: {why}")]
    Key { path: String, why: KeyError },
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
    #[error("this system has no {what}, so no change can be tied to it and undone safely; nothing was changed")]
    NoIdentity { what: &'static str },
    #[error("{failure}; every change already made was put back{journal_note}")]
    RolledBack { failure: String, journal_note: String },
    #[error(
        "{failure}; putting back what was already written failed for {}: these are LEFT CHANGED. \
         The journal {journal} is kept: `numasleuth undo {journal}` restores them once the cause is fixed",
        left_changed.join(", ")
    )]
    LeftChanged {
        failure: String,
        left_changed: Vec<String>,
        journal: String,
    },
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
    #[error(
        "{failure}, after {moved} page(s) had already moved. The journal {journal} is kept: \
         `numasleuth undo {journal}` moves back every page still where this move put it"
    )]
    PagesPartlyMoved {
        failure: String,
        moved: u64,
        journal: String,
    },
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

/// The kernel files a change reads and writes. [`Root`] is the real one;
/// tests put a failing one in front of it to reach the rollback paths a
/// real kernel reaches only under races.
pub(crate) trait KernelFiles {
    fn read(&self, path: &str) -> Result<String, ReadError>;
    fn write(&self, path: &str, value: &str) -> Result<(), ReadError>;
}

impl KernelFiles for Root {
    fn read(&self, path: &str) -> Result<String, ReadError> {
        Root::read(self, path)
    }
    fn write(&self, path: &str, value: &str) -> Result<(), ReadError> {
        Root::write(self, path, value)
    }
}

/// One planned write: `path` from `from` to `to`.
struct Write {
    path: String,
    from: String,
    to: String,
}

/// Writes each in order and checks the kernel took it; on any failure puts
/// back the ones already written, newest first, and checks those too.
/// Returns the failure and the files that could not be put back.
fn write_all_or_nothing(root: &impl KernelFiles, writes: &[Write]) -> Result<(), (String, Vec<String>)> {
    for (done, w) in writes.iter().enumerate() {
        let failure = match root.write(&w.path, &w.to) {
            Err(cause) => Some(format!("writing /{} failed: {cause}", w.path)),
            Ok(()) => match root.read(&w.path) {
                Ok(found) if same_value(&found, &w.to) => None,
                Ok(found) => Some(format!(
                    "/{} reads `{}` after writing `{}`: the kernel refused the value",
                    w.path,
                    numasleuth_kernel::error::quote(found.trim()),
                    w.to
                )),
                Err(cause) => Some(format!("reading back /{} failed: {cause}", w.path)),
            },
        };
        if let Some(failure) = failure {
            // The failed write is put back too: a refused value may have
            // been half-taken.
            let left = writes[..=done].iter().rev().filter_map(|w| restore(root, w)).collect();
            return Err((failure, left));
        }
    }
    Ok(())
}

/// Writes `from` back and reads it; names the file if it is still changed.
/// A file that no longer exists (its IRQ is gone) holds no change.
fn restore(root: &impl KernelFiles, w: &Write) -> Option<String> {
    let _ = root.write(&w.path, &w.from);
    match root.read(&w.path) {
        Ok(found) if same_value(&found, &w.from) => None,
        Err(e) if e.is_not_found() => None,
        Ok(found) => Some(format!(
            "/{} (reads `{}`, was `{}`)",
            w.path,
            numasleuth_kernel::error::quote(found.trim()),
            w.from
        )),
        Err(e) => Some(format!("/{} (unreadable: {e}; was `{}`)", w.path, w.from)),
    }
}

/// Refuses to change a system that cannot be named: the journal would be
/// impossible to tie to it.
pub(crate) fn require_identity(root: &Root) -> Result<MachineIdentity, ChangeError> {
    let here = MachineIdentity::read(root);
    match here.missing() {
        Some(what) => Err(ChangeError::NoIdentity { what }),
        None => Ok(here),
    }
}

/// Checks every `before`, writes the journal, then makes the changes.
pub fn apply(root: &Root, journal: &mut Journal, journal_path: &Path, key: &JournalKey) -> Result<(), ChangeError> {
    require_identity(root)?;
    apply_to(root, journal, journal_path, key)
}

pub(crate) fn apply_to(
    root: &impl KernelFiles,
    journal: &mut Journal,
    journal_path: &Path,
    key: &JournalKey,
) -> Result<(), ChangeError> {
    for c in &journal.changes {
        check_current(root, &c.path, &c.before)?;
    }
    journal.save(journal_path, key)?;
    let writes: Vec<Write> = journal
        .changes
        .iter()
        .map(|c| Write {
            path: c.path.clone(),
            from: c.before.clone(),
            to: c.after.clone(),
        })
        .collect();
    let journal_shown = journal_path.display().to_string();
    write_all_or_nothing(root, &writes).map_err(|(failure, left_changed)| {
        if left_changed.is_empty() {
            // Everything is as it was: a journal of a change that did not
            // happen would only mislead a later `undo`.
            let journal_note = match std::fs::remove_file(journal_path) {
                Ok(()) => String::new(),
                Err(e) => format!(" (the journal {journal_shown} could not be removed: {e}; it records nothing)"),
            };
            ChangeError::RolledBack { failure, journal_note }
        } else {
            ChangeError::LeftChanged {
                failure,
                left_changed,
                journal: journal_shown,
            }
        }
    })
}

fn check_current(root: &impl KernelFiles, path: &str, expected: &str) -> Result<(), ChangeError> {
    let found = root.read(path)?;
    if same_value(&found, expected) {
        return Ok(());
    }
    Err(ChangeError::Drifted {
        path: path.to_string(),
        expected: expected.to_string(),
        found: numasleuth_kernel::error::quote(found.trim()),
    })
}

/// Refuses a journal written on another machine, host or boot. Both sides
/// must be complete: a missing part is a refusal, never a pass.
pub(crate) fn check_machine(root: &Root, journal: &Journal, journal_path: &Path) -> Result<(), ChangeError> {
    let here = require_identity(root)?;
    let path = journal_path.display().to_string();
    for (what, theirs, ours) in [
        ("machine", &journal.machine.machine_id, &here.machine_id),
        ("host", &journal.machine.hostname, &here.hostname),
        ("boot", &journal.machine.boot_id, &here.boot_id),
    ] {
        if theirs.is_none() || theirs != ours {
            return Err(ChangeError::OtherMachine {
                path,
                what,
                theirs: numasleuth_kernel::error::quote(theirs.as_deref().unwrap_or("none")),
                ours: ours.clone().unwrap_or_default(),
            });
        }
    }
    Ok(())
}

/// What undo of a file journal did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FilesUndone {
    /// Paths written back to their `before`.
    pub restored: Vec<String>,
    /// Paths already holding their `before` (a partly rolled-back apply).
    pub already_restored: Vec<String>,
}

/// Restores every `before` of a journal made on this machine and boot. A
/// file already at its `before` is left alone; one at neither value means
/// something else changed it, and then nothing is written.
pub fn undo_files(root: &Root, journal: &Journal, journal_path: &Path) -> Result<FilesUndone, ChangeError> {
    check_machine(root, journal, journal_path)?;
    undo_files_to(root, journal, journal_path)
}

pub(crate) fn undo_files_to(
    root: &impl KernelFiles,
    journal: &Journal,
    journal_path: &Path,
) -> Result<FilesUndone, ChangeError> {
    let mut writes = Vec::new();
    let mut already_restored = Vec::new();
    for c in journal.changes.iter().rev() {
        let found = root.read(&c.path)?;
        if same_value(&found, &c.after) {
            writes.push(Write {
                path: c.path.clone(),
                from: c.after.clone(),
                to: c.before.clone(),
            });
        } else if same_value(&found, &c.before) {
            already_restored.push(c.path.clone());
        } else {
            return Err(ChangeError::Drifted {
                path: c.path.clone(),
                expected: c.after.clone(),
                found: numasleuth_kernel::error::quote(found.trim()),
            });
        }
    }
    write_all_or_nothing(root, &writes).map_err(|(failure, left_changed)| {
        let journal = journal_path.display().to_string();
        if left_changed.is_empty() {
            ChangeError::RolledBack {
                failure,
                journal_note: format!("; the journal {journal} is kept"),
            }
        } else {
            ChangeError::LeftChanged {
                failure,
                left_changed,
                journal,
            }
        }
    })?;
    Ok(FilesUndone {
        restored: writes.into_iter().map(|w| w.path).collect(),
        already_restored,
    })
}

/// Loads a file journal and undoes it.
pub fn undo(root: &Root, journal_path: &Path, key: &JournalKey) -> Result<(Journal, FilesUndone), ChangeError> {
    let journal = Journal::load(journal_path, key)?;
    if journal.kind != crate::journal::KIND_IRQ {
        return Err(ChangeError::Journal {
            path: journal_path.display().to_string(),
            why: JournalRefusal::NoFileChanges,
        });
    }
    let undone = undo_files(root, &journal, journal_path)?;
    Ok((journal, undone))
}

#[cfg(test)]
#[path = "apply_tests.rs"]
mod tests;
