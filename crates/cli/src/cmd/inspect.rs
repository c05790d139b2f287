//! `numasleuth inspect PID`: where a process's threads run and where its
//! memory sits, down to the ELF section, with findings.
//!
//! Wiring only: the placement model is `numasleuth_app::process`; this
//! judges it (`analyze::process`) and prints it (`report`).

use std::process::ExitCode;

use numasleuth_kernel::Root;
use numasleuth_model::process::ProcessModel;
use numasleuth_model::Topology;
use numasleuth_report::{inspect_json, inspect_text};

use super::process_args::InspectArgs;
use numasleuth_report::export::TextJson;

pub fn run(root: &Root, args: &InspectArgs) -> anyhow::Result<ExitCode> {
    let outputs = args.output.plan_text_json(args.json)?;
    let topology = super::topology(root)?;
    let model = model(root, args.pid(), args.all_mappings, &topology)?;
    let findings = numasleuth_analyze::process::findings(&model, &topology);
    let doc = inspect_json::InspectDocument::new(&model, &findings);
    let report = TextJson::new(inspect_json::document(&doc), |layout| {
        inspect_text::render(&model, &findings, args.sections, layout)
    });
    super::output::emit(root, &outputs, &report)?;
    Ok(ExitCode::SUCCESS)
}

/// The placement model of one process (`inspect`, `runs`, `top`, `serve`).
/// A process a snapshot lacks is named with what the snapshot holds.
pub fn model(root: &Root, pid: u32, all_mappings: bool, topology: &Topology) -> anyhow::Result<ProcessModel> {
    numasleuth_app::process_ref::process_stat(root, pid)?;
    Ok(numasleuth_app::process::model(root, pid, all_mappings, topology)?)
}
