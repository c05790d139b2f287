//! Changing the system, reversibly, and refusing to be steered.
//!
//! Nothing here runs without `--apply`. Every change is a list of kernel
//! file writes with the value found before; the list is written to a
//! sealed journal *before* the first write, each write is verified, and a
//! failure part-way rolls back what was already written — and says which
//! files are left changed when even that fails. `undo` replays the journal
//! backwards on the same machine and boot only. Page moves of a live
//! process (`move --apply`) are journalled the same way ([`pages`]) and
//! bound to the process's PID and start time as well.
//!
//! `undo` runs as root on a file, so the journal is hostile input: see
//! [`journal`] for the checks and `docs/security.md` for the threat model.

mod apply;
pub mod error;
pub mod journal;
pub mod journal_file;
pub mod page_session;
pub mod pages;
pub mod seal;
mod trust;

use std::path::Path;

use numasleuth_kernel::Root;

pub use apply::{apply, undo, undo_files, ChangeError, FilesUndone};
pub use error::{JournalError, JournalRefusal, KeyError, TrustError, WriteError};
pub use journal::{FileChange, Journal, MachineIdentity, PageMove, KIND_IRQ};
pub use page_session::{PageSession, Restored, SetMoved};
pub use pages::{apply_pages, undo_pages, PagesOutcome};
pub use seal::JournalKey;
pub use trust::MAX_JOURNAL_BYTES;

/// What `undo` of any journal did.
#[derive(Debug)]
pub enum Undone {
    Files(Journal, FilesUndone),
    Pages(Journal, PagesOutcome),
}

/// Undoes a journal of either kind: file changes or page moves.
pub fn undo_any(root: &Root, journal_path: &Path, key: &JournalKey) -> Result<Undone, ChangeError> {
    let journal = Journal::load(journal_path, key)?;
    if journal.kind == pages::KIND {
        let outcome = undo_pages(root, &journal, journal_path)?;
        return Ok(Undone::Pages(journal, outcome));
    }
    let undone = undo_files(root, &journal, journal_path)?;
    Ok(Undone::Files(journal, undone))
}
