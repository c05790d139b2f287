//! `numasleuth topo`.

use std::process::ExitCode;

use numasleuth_analyze::topology::warnings;
use numasleuth_kernel::Root;
use numasleuth_report::export::TextJson;
use numasleuth_report::{topo_json, topo_text};

use crate::cli::TopoArgs;

pub fn run(root: &Root, args: &TopoArgs) -> anyhow::Result<ExitCode> {
    let plan = args.output.plan_text_json(args.json)?;
    let read = numasleuth_app::env::read_degraded(root)?;
    let topo = &read.topology;
    // Text shows what could not be read on stderr; JSON carries it with
    // the rest of the warnings.
    if !plan.json() {
        super::warn(&read.warnings);
    }
    let mut all = read.warnings;
    all.extend(warnings(topo));
    let report = TextJson::new(topo_json::build(topo, all), |layout| {
        topo_text::render(topo, &warnings(topo), layout)
    });
    super::output::emit(root, &plan, &report)?;
    Ok(ExitCode::SUCCESS)
}
