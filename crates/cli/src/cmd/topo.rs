//! `numasleuth topo`.

use std::process::ExitCode;

use numasleuth_analyze::topology::warnings;
use numasleuth_kernel::Root;
use numasleuth_report::{topo_json, topo_text};

use crate::cli::TopoArgs;
use crate::output;

pub fn run(root: &Root, args: &TopoArgs) -> anyhow::Result<ExitCode> {
    let read = super::read_degraded(root)?;
    let topo = &read.topology;
    if args.json {
        // What could not be read goes with the rest of the warnings.
        let mut all = read.warnings;
        all.extend(warnings(topo));
        let mut doc = topo_json::build(topo, all);
        doc.provenance = Some(super::provenance::read(root));
        output::print_json(&doc)?;
    } else {
        super::warn(&read.warnings);
        let provenance = super::provenance::read(root);
        output::print(&format!(
            "{}\n{}",
            provenance.line(),
            topo_text::render(topo, &warnings(topo))
        ))?;
    }
    Ok(ExitCode::SUCCESS)
}
