//! `numasleuth undo JOURNAL`: put back exactly what `--apply` replaced:
//! kernel file values (`irq --apply`) or page placement (`move --apply`).
//!
//! Wiring only: the undo is `numasleuth_app::undo` (over
//! `change::undo_any`), the text `report::undo_text`.

use std::process::ExitCode;

use numasleuth_app::undo::{self, UndoDocument, UndoRequest};
use numasleuth_kernel::Root;
use numasleuth_report::undo_text;

use crate::cli::UndoArgs;
use crate::output;

pub fn run(root: &Root, args: &UndoArgs) -> anyhow::Result<ExitCode> {
    let request = UndoRequest {
        journal: args.journal.clone(),
    };
    let doc = undo::run(root, &request)?;
    let text = match &doc {
        UndoDocument::Files(restored) => undo_text::files_text(restored),
        UndoDocument::Pages(view) => undo_text::pages_text(view),
    };
    output::print(&output::stdout_layout(false).wrap(&text))?;
    if let Some(left) = doc.left_behind() {
        return Err(left.into());
    }
    Ok(ExitCode::SUCCESS)
}
