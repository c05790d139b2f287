//! `numasleuth undo JOURNAL`: put back exactly what `--apply` replaced.

use std::process::ExitCode;

use anyhow::Context;
use numasleuth_kernel::Root;

use crate::cli::UndoArgs;
use crate::output;

pub fn run(root: &Root, args: &UndoArgs) -> anyhow::Result<ExitCode> {
    let journal = numasleuth_change::undo(root, &args.journal)
        .with_context(|| format!("cannot undo {}", args.journal.display()))?;
    let mut text = String::new();
    for change in journal.changes.iter().rev() {
        text.push_str(&format!(
            "restored /{}: {} -> {}\n",
            change.path, change.after, change.before
        ));
    }
    output::print(&text)?;
    Ok(ExitCode::SUCCESS)
}
