//! `numasleuth topo`.

use std::process::ExitCode;

use numasleuth_analyze::topology::warnings;
use numasleuth_kernel::Root;
use numasleuth_report::{topo_json, topo_text};

use crate::cli::TopoArgs;
use crate::output;

pub fn run(root: &Root, args: &TopoArgs) -> anyhow::Result<ExitCode> {
    let topo = super::topology(root)?;
    let warnings = warnings(&topo);
    if args.json {
        output::print_json(&topo_json::build(&topo, warnings))?;
    } else {
        output::print(&topo_text::render(&topo, &warnings))?;
    }
    Ok(ExitCode::SUCCESS)
}
