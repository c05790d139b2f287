//! `numasleuth irq`: audit, plan (`--fix`) and change (`--apply`) IRQ
//! affinity, with a journal `undo` reverses: the application layer's
//! (`numasleuth_app::irq`), printed here.

use std::process::ExitCode;

use numasleuth_app::irq::IrqRequest;
use numasleuth_kernel::Root;
use numasleuth_report::irq_json::IrqReport;

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
        document: &outcome,
        planned: args.fix || args.apply,
    };
    super::output::emit(root, &outputs, &report)?;
    Ok(ExitCode::SUCCESS)
}
