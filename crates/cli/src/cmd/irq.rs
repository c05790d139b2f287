//! `numasleuth irq`: audit, plan (`--fix`) and change (`--apply`) IRQ
//! affinity, with a journal `undo` reverses: the application layer's
//! (`numasleuth_app::irq`), printed here.

use std::process::ExitCode;

use numasleuth_app::irq::IrqRequest;
use numasleuth_kernel::Root;
use numasleuth_report::irq_json::{self, IrqJson, IrqReport};

use super::output::Aliases;
use crate::cli::IrqArgs;

pub fn run(root: &Root, args: &IrqArgs) -> anyhow::Result<ExitCode> {
    let outputs = args.output.plan::<IrqReport>(Aliases {
        json: args.json,
        ..Aliases::default()
    })?;
    let request = IrqRequest {
        fix: args.fix,
        apply: args.apply,
        journal: args.journal.clone(),
    };
    let outcome = numasleuth_app::irq::run(root, &request, &crate::output::Say)?;
    let report = IrqReport {
        document: IrqJson {
            schema: irq_json::SCHEMA,
            devices: &outcome.devices,
            irqbalance_pids: &outcome.irqbalance_pids,
            plan: &outcome.plan,
            applied: outcome.journal.is_some(),
            journal: outcome.journal.as_ref().map(|p| p.display().to_string()),
        },
        planned: args.fix || args.apply,
    };
    super::output::emit(root, &outputs, &report)?;
    Ok(ExitCode::SUCCESS)
}
