//! `numasleuth undo JOURNAL`: put back exactly what `--apply` replaced:
//! kernel file values (`irq --apply`) or page placement (`move --apply`).

use std::process::ExitCode;

use anyhow::{bail, Context};
use numasleuth_change::pages::PageState;
use numasleuth_change::{JournalKey, PagesOutcome, Undone};
use numasleuth_kernel::Root;

use crate::cli::UndoArgs;
use crate::output;

pub fn run(root: &Root, args: &UndoArgs) -> anyhow::Result<ExitCode> {
    super::refuse_under_snapshot(root, "undo")?;
    let key = JournalKey::for_this_user().context("cannot check the journal's seal, so nothing was changed")?;
    let undone = numasleuth_change::undo_any(root, &args.journal, &key)
        .with_context(|| format!("cannot undo {}", args.journal.display()))?;
    let mut text = String::new();
    match undone {
        Undone::Files(journal, undone) => {
            for change in journal.changes.iter().rev() {
                let verb = if undone.already_restored.contains(&change.path) {
                    "already restored"
                } else {
                    "restored"
                };
                text.push_str(&format!(
                    "{verb} /{}: {} -> {}\n",
                    change.path, change.after, change.before
                ));
            }
        }
        Undone::Pages(journal, outcome) => {
            for m in &journal.page_moves {
                text.push_str(&format!(
                    "process {}: {} page(s) at {:#x}: node {} -> node {}\n",
                    m.pid, m.pages, m.address, m.to_node, m.from_node
                ));
            }
            text.push_str(&pages_summary(&outcome));
            output::print(&output::stdout_layout(false).wrap(&text))?;
            if outcome.verified < outcome.attempted {
                bail!(
                    "{} of {} page(s) did not go back to their node (listed above)",
                    outcome.attempted - outcome.verified,
                    outcome.attempted
                );
            }
            return Ok(ExitCode::SUCCESS);
        }
    }
    output::print(&output::stdout_layout(false).wrap(&text))?;
    Ok(ExitCode::SUCCESS)
}

/// What the page is now, in words: read with pagemap, so a page never
/// touched is "not yet touched" and only a hole is "unmapped".
fn status(s: &PageState) -> String {
    s.residency.describe()
}

fn pages_summary(o: &PagesOutcome) -> String {
    let mut text = format!(
        "moved back {} of {} page(s), verified with move_pages: {} where they came from\n",
        o.attempted, o.pages, o.verified
    );
    if o.revealed > 0 {
        text.push_str(&format!(
            "{} page(s) were between NUMA-balancing hinting faults and were read once to end the fault, so they could move\n",
            o.revealed
        ));
    }
    if let Some(why) = &o.reveal_failed {
        text.push_str(&format!("note: {why}\n"));
    }
    for s in &o.not_moved {
        text.push_str(&format!("  {:#x}: did not move back, {}\n", s.address, status(s)));
    }
    if o.already_home_pages > 0 {
        text.push_str(&format!(
            "{} page(s) were already on the node they came from and were left there: the move never reached \
             them (it was killed or failed part way), or they were sent back since\n",
            o.already_home_pages
        ));
    }
    if o.left_alone_pages > 0 {
        text.push_str(&format!(
            "{} page(s) were on neither node of the journal (moved since, e.g. by AutoNUMA, or no longer \
             resident) and were left alone:\n",
            o.left_alone_pages
        ));
        for s in o.left_alone.iter().take(20) {
            text.push_str(&format!("  {:#x}: {}\n", s.address, status(s)));
        }
        if o.left_alone_pages > 20 {
            text.push_str(&format!("  … and {} more\n", o.left_alone_pages - 20));
        }
    }
    text
}
