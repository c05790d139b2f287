//! `numasleuth meminfo`: each node's meminfo in MiB with a total, like
//! `numastat -m`, read from the live system or a snapshot.

use std::process::ExitCode;

use clap::Args;
use numasleuth_app::meminfo::MeminfoRequest;
use numasleuth_kernel::{IdList, Root};
use numasleuth_report::meminfo_text::MeminfoReport;

#[derive(Debug, Args)]
pub struct MeminfoArgs {
    /// Only these nodes (numactl syntax, e.g. 0-1,3); the total is theirs.
    /// Default: every node.
    #[arg(short = 'N', long, value_name = "LIST", value_parser = numasleuth_app::limits::text::node_list)]
    pub nodes: Option<IdList>,
    /// Print JSON (schema numasleuth.meminfo/1): every row in bytes per
    /// node, and the huge page counts as the kernel gave them.
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub output: super::output::OutputArgs,
}

pub fn run(root: &Root, args: &MeminfoArgs) -> anyhow::Result<ExitCode> {
    let plan = args.output.plan_text_json(args.json)?;
    // Warnings go to stderr for a person; JSON carries none of them.
    let observer: &dyn numasleuth_app::Observer = if plan.json() {
        &numasleuth_app::Quiet
    } else {
        &crate::output::Say
    };
    let request = MeminfoRequest {
        nodes: args.nodes.clone(),
    };
    let meminfo = numasleuth_app::meminfo::run(root, &request, observer)?;
    super::output::emit(root, &plan, &MeminfoReport(&meminfo))?;
    Ok(ExitCode::SUCCESS)
}
