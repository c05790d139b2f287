//! Changing the system, reversibly.
//!
//! Nothing here runs without `--apply`. Every change is a list of kernel
//! file writes with the value found before; the list is written to a
//! checksummed journal *before* the first write, each write is verified,
//! and a failure part-way rolls back what was already written. `undo`
//! replays the journal backwards on the same machine and boot only.
//! Page moves of a live process (`move --apply`) are journalled the same
//! way ([`pages`]) and bound to the process's PID and start time as well.

mod apply;
mod journal;
pub mod pages;

use std::path::Path;

use numasleuth_kernel::Root;

pub use apply::{apply, undo, ChangeError};
pub use journal::{FileChange, Journal, MachineIdentity, PageMove};
pub use pages::{apply_pages, undo_pages, PagesOutcome};

/// What `undo` of any journal did.
#[derive(Debug)]
pub enum Undone {
    Files(Journal),
    Pages(Journal, PagesOutcome),
}

/// Undoes a journal of either kind: file changes or page moves.
pub fn undo_any(root: &Root, journal_path: &Path) -> Result<Undone, ChangeError> {
    let journal = Journal::load(journal_path)?;
    if journal.kind == pages::KIND {
        let outcome = undo_pages(root, &journal, journal_path)?;
        return Ok(Undone::Pages(journal, outcome));
    }
    undo(root, journal_path).map(Undone::Files)
}
