//! `numasleuth undo JOURNAL`: put back exactly what `--apply` replaced:
//! kernel file values (`irq --apply`) or page placement (`move --apply`).
//!
//! Wiring only: the undo is `change::undo_any`, the text
//! `report::undo_text`.

use std::process::ExitCode;

use anyhow::{bail, Context};
use numasleuth_change::pages::PageState;
use numasleuth_change::{JournalKey, Undone};
use numasleuth_kernel::Root;
use numasleuth_report::undo_text::{self, FileRestored, PageNow, PagesBack, PagesUndone};

use crate::cli::UndoArgs;
use crate::output;

pub fn run(root: &Root, args: &UndoArgs) -> anyhow::Result<ExitCode> {
    super::refuse_under_snapshot(root, "undo")?;
    let key = JournalKey::for_this_user().context("cannot check the journal's seal, so nothing was changed")?;
    let undone = numasleuth_change::undo_any(root, &args.journal, &key)
        .with_context(|| format!("cannot undo {}", args.journal.display()))?;
    match undone {
        Undone::Files(journal, undone) => {
            let restored: Vec<FileRestored> = journal
                .changes
                .iter()
                .rev()
                .map(|change| FileRestored {
                    path: change.path.clone(),
                    applied: change.after.clone(),
                    restored: change.before.clone(),
                    already_restored: undone.already_restored.contains(&change.path),
                })
                .collect();
            output::print(&output::stdout_layout(false).wrap(&undo_text::files_text(&restored)))?;
        }
        Undone::Pages(journal, o) => {
            let now = |s: &PageState| PageNow {
                address: s.address,
                residency: s.residency,
            };
            let view = PagesUndone {
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
            };
            output::print(&output::stdout_layout(false).wrap(&undo_text::pages_text(&view)))?;
            if o.verified < o.attempted {
                bail!(
                    "{} of {} page(s) did not go back to their node (listed above)",
                    o.attempted - o.verified,
                    o.attempted
                );
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}
