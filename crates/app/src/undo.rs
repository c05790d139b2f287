//! `undo JOURNAL`'s pipeline: put back exactly what `--apply` replaced,
//! kernel file values (`irq --apply`) or page placement (`move --apply`,
//! `bisect --apply`), through `change::undo_any`. [`run`] returns what
//! `report::undo_text` shows; [`UndoDocument::left_behind`] is the error a
//! front-end raises after showing it.

use std::path::PathBuf;

use numasleuth_change::pages::PageState;
use numasleuth_change::{ChangeError, JournalKey, Undone};
use numasleuth_kernel::Root;
use numasleuth_report::undo_text::{FileRestored, PageNow, PagesBack, PagesUndone};

/// What `undo` asks: the journal an `--apply` wrote.
#[derive(Debug, Clone)]
pub struct UndoRequest {
    pub journal: PathBuf,
}

/// What was put back, in the shape `report::undo_text` shows.
pub enum UndoDocument {
    /// Kernel files, the last change first.
    Files(Vec<FileRestored>),
    Pages(PagesUndone),
}

/// Why nothing was undone, in the words `undo` prints: where the message
/// wraps a cause, the cause is the source, so `{:#}` prints one line.
#[derive(Debug, thiserror::Error)]
pub enum UndoError {
    #[error(transparent)]
    Refused(#[from] crate::SnapshotRefused),
    #[error("cannot check the journal's seal, so nothing was changed")]
    NoKey {
        #[source]
        error: Box<ChangeError>,
    },
    #[error("cannot undo {}", .journal.display())]
    Undo {
        journal: PathBuf,
        #[source]
        error: Box<ChangeError>,
    },
}

/// Pages an undo could not send home, after its report was shown.
#[derive(Debug, thiserror::Error)]
#[error("{missing} of {attempted} page(s) did not go back to their node (listed above)", missing = .attempted - .verified)]
pub struct PagesLeftBehind {
    pub attempted: u64,
    pub verified: u64,
}

impl UndoDocument {
    /// `Some` when pages asked to move home did not get there.
    pub fn left_behind(&self) -> Option<PagesLeftBehind> {
        match self {
            UndoDocument::Pages(view) if view.verified < view.attempted => Some(PagesLeftBehind {
                attempted: view.attempted,
                verified: view.verified,
            }),
            _ => None,
        }
    }
}

/// Checks the journal's seal and reverses it on the live system.
pub fn run(root: &Root, request: &UndoRequest) -> Result<UndoDocument, UndoError> {
    crate::refuse_under_snapshot(root, "undo")?;
    let key = JournalKey::for_this_user().map_err(|e| UndoError::NoKey { error: Box::new(e) })?;
    let undone = numasleuth_change::undo_any(root, &request.journal, &key).map_err(|e| UndoError::Undo {
        journal: request.journal.clone(),
        error: Box::new(e),
    })?;
    Ok(match undone {
        Undone::Files(journal, undone) => UndoDocument::Files(
            journal
                .changes
                .iter()
                .rev()
                .map(|change| FileRestored {
                    path: change.path.clone(),
                    applied: change.after.clone(),
                    restored: change.before.clone(),
                    already_restored: undone.already_restored.contains(&change.path),
                })
                .collect(),
        ),
        Undone::Pages(journal, o) => {
            let now = |s: &PageState| PageNow {
                address: s.address,
                residency: s.residency,
            };
            UndoDocument::Pages(PagesUndone {
                moves: journal
                    .page_moves
                    .iter()
                    .map(|m| PagesBack {
                        pid: m.pid,
                        pages: m.pages,
                        address: m.address,
                        applied_node: m.to_node,
                        original_node: m.from_node,
                    })
                    .collect(),
                pages: o.pages,
                attempted: o.attempted,
                verified: o.verified,
                revealed: o.revealed,
                reveal_failed: o.reveal_failed.clone(),
                not_moved: o.not_moved.iter().map(now).collect(),
                already_home_pages: o.already_home_pages,
                left_alone_pages: o.left_alone_pages,
                left_alone: o.left_alone.iter().map(now).collect(),
            })
        }
    })
}
