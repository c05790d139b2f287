//! `numasleuth irq`: audit, plan (`--fix`) and change (`--apply`) IRQ
//! affinity, with a journal `undo` reverses.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{SystemTime, UNIX_EPOCH};

use anyhow::Context;
use numasleuth_analyze::irq::{audit, plan};
use numasleuth_change::{FileChange, Journal, JournalKey, MachineIdentity, KIND_IRQ};
use numasleuth_kernel::Root;
use numasleuth_report::irq_json::{self, IrqJson, IrqReport};

use super::output::Aliases;
use crate::cli::IrqArgs;

pub fn run(root: &Root, args: &IrqArgs) -> anyhow::Result<ExitCode> {
    let outputs = args.output.plan::<IrqReport>(Aliases {
        json: args.json,
        ..Aliases::default()
    })?;
    if args.apply {
        super::refuse_under_snapshot(root, "irq --apply")?;
    }
    let (topo, host) = super::host(root)?;
    host.interrupts
        .as_ref()
        .map_err(Clone::clone)
        .context("cannot audit IRQs")?;
    let devices = audit(&topo, &host);
    let irqbalance = host.irqbalance_pids.clone().unwrap_or_default();
    let changes: Vec<_> = if args.fix || args.apply {
        plan(&topo, &devices)
    } else {
        Vec::new()
    };
    let journal_path = if args.apply && !changes.is_empty() {
        Some(apply(root, &changes, args.journal.clone())?)
    } else {
        None
    };
    let report = IrqReport {
        document: IrqJson {
            schema: irq_json::SCHEMA,
            devices: &devices,
            irqbalance_pids: &irqbalance,
            plan: &changes,
            applied: journal_path.is_some(),
            journal: journal_path.as_ref().map(|p| p.display().to_string()),
        },
        planned: args.fix || args.apply,
    };
    super::output::emit(root, &outputs, &report)?;
    Ok(ExitCode::SUCCESS)
}

fn apply(
    root: &Root,
    changes: &[numasleuth_analyze::irq::AffinityChange],
    path: Option<PathBuf>,
) -> anyhow::Result<PathBuf> {
    let created_unix_s = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    let path = path.unwrap_or_else(|| PathBuf::from(format!("numasleuth-irq-{created_unix_s}.journal.json")));
    let file_changes = changes
        .iter()
        .map(|c| FileChange {
            path: format!("proc/irq/{}/smp_affinity_list", c.irq),
            before: c.before.clone(),
            after: c.after.clone(),
        })
        .collect();
    let mut journal = Journal::new(KIND_IRQ, MachineIdentity::read(root), created_unix_s, file_changes);
    let key = JournalKey::for_this_user().context("cannot seal a journal, so nothing was changed")?;
    numasleuth_change::apply(root, &mut journal, &path, &key).context("cannot apply the IRQ affinity plan")?;
    Ok(path)
}
