//! `numasleuth meminfo`: each node's meminfo in MiB with a total, like
//! `numastat -m`, read from the live system or a snapshot.

use std::process::ExitCode;

use anyhow::bail;
use clap::Args;
use numasleuth_analyze::meminfo::table;
use numasleuth_kernel::procfs::meminfo::{self, Meminfo};
use numasleuth_kernel::sysfs::node;
use numasleuth_kernel::unread::Gaps;
use numasleuth_kernel::{IdList, Root};
use numasleuth_report::meminfo_text::MeminfoReport;

#[derive(Debug, Args)]
pub struct MeminfoArgs {
    /// Only these nodes (numactl syntax, e.g. 0-1,3); the total is theirs.
    /// Default: every node.
    #[arg(short = 'N', long, value_name = "LIST", value_parser = crate::bounds::node_list)]
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
    // Only the files it prints from, as numastat -m: the node directories'
    // meminfo and /proc/meminfo (for the huge page size), not the topology.
    let mut gaps = Gaps::default();
    let per_node = node::read_meminfo(root, &mut gaps);
    let machine = gaps.ok(meminfo::read(root, "proc/meminfo"));
    if !plan.json() {
        super::warn(&super::unread_warnings(&gaps.into_unread()));
    }
    // A kernel without NUMA has no node directory: the machine is node 0.
    let (nodes, fallback): (Vec<(u32, &Meminfo)>, bool) = match &per_node {
        Some(nodes) if !nodes.is_empty() => (
            nodes
                .iter()
                .filter(|(_, info)| !info.values.is_empty())
                .map(|(id, info)| (*id, info))
                .collect(),
            false,
        ),
        _ => (machine.as_ref().map(|m| vec![(0, m)]).unwrap_or_default(), true),
    };
    if nodes.is_empty() {
        bail!("no node's meminfo could be read (see the warnings above)");
    }
    let chosen = select(&nodes, args.nodes.as_ref())?;
    let mut meminfo = table(&chosen, machine.as_ref().and_then(|m| m.get("Hugepagesize")));
    if fallback {
        meminfo.notes.push(
            "this kernel has no per-node meminfo (no NUMA): node 0 is the whole machine, from /proc/meminfo".into(),
        );
    }
    super::output::emit(root, &plan, &MeminfoReport(&meminfo))?;
    Ok(ExitCode::SUCCESS)
}

/// The nodes asked for with `-N`, each of which must have a meminfo.
fn select<'a>(nodes: &[(u32, &'a Meminfo)], wanted: Option<&IdList>) -> anyhow::Result<Vec<(u32, &'a Meminfo)>> {
    let Some(wanted) = wanted else {
        return Ok(nodes.to_vec());
    };
    let known = IdList::new(nodes.iter().map(|(id, _)| *id).collect());
    if let Some(missing) = wanted.iter().find(|&id| !known.contains(id)) {
        bail!("node {missing} has no meminfo here; the nodes with one are {known}");
    }
    Ok(nodes.iter().filter(|(id, _)| wanted.contains(*id)).copied().collect())
}
