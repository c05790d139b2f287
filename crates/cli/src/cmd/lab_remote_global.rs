//! `numasleuth lab remote-global`: the database incident on this machine.
//! Workers on node A write a global K times per operation; the global sits
//! on node A, on node B, or per thread. Beside the throughput, a line
//! transfer is timed on its own (CAS ping-pong between two of A's CPUs,
//! line homed where the global was) and fed to the incident's model.

use std::process::ExitCode;

use anyhow::{bail, Context};
use numasleuth_analyze::lab::remote_global as rg;
use numasleuth_kernel::Root;
use numasleuth_measure::lab::grid::{cpus_for, time_transfers, RemoteGlobalGrid, RemoteGlobalStep, TransferStep};
use numasleuth_measure::lab::remote_global::{Global, LOCAL_WORDS_PER_OP};
use numasleuth_measure::steps::PhaseError;
use numasleuth_report::lab_json::{RemoteGlobalDocument, REMOTE_GLOBAL_SCHEMA};
use numasleuth_report::{lab_charts, lab_text};

use super::lab;
use super::lab_args::RemoteGlobalArgs;
use super::measure_plan::{self, step_error, Machine, Progress};

/// Round trips averaged into one transfer sample.
const TRANSFERS_PER_SAMPLE: usize = 2000;

pub fn run(root: &Root, args: &RemoteGlobalArgs) -> anyhow::Result<ExitCode> {
    let common = &args.common;
    let outputs = lab::outputs(common)?;
    let machine = lab::machine(root, "lab remote-global", &args.common)?;
    let (node, cpus, remote_node) = nodes(&machine, args)?;
    let (counts, oversubscribed) = lab::thread_counts(common, &cpus, &format!("of node {node} this process may use"))?;
    let mut placements = vec![Global::Local];
    placements.extend(remote_node.map(|_| Global::Remote));
    placements.push(Global::PerThread);
    let pair = (cpus.len() >= 2).then(|| [cpus[0], cpus[1]]);
    // A transfer is timed only where two of the workers' CPUs can ping-pong.
    let homes = match pair {
        Some(_) => transfer_homes(&placements, node, remote_node),
        None => Vec::new(),
    };
    let grid = RemoteGlobalGrid {
        placements: &placements,
        cpus: &cpus,
        counts: &counts,
        local_node: node,
        remote_node,
        writes_per_op: args.writes_per_op,
        sampling: lab::sampling(common),
    };
    let total = grid.steps().len() + homes.len();
    let mut progress = Progress::new(total as u64, "lab remote-global");
    let measured = measure_placements(&grid, &mut progress)?;
    let transfers = match pair {
        Some(pair) => transfers(&homes, pair, common.samples as usize, &mut progress)?,
        None => Vec::new(),
    };
    progress.finish();
    let (cycles_per_ns, cycles_note) = measure_plan::cycles();
    let rows = rg::rows(measured);
    let models = rg::models(&rows, &transfers, args.writes_per_op, cycles_per_ns);
    let meaning = rg::meaning(&rows, &models, remote_node.is_some(), args.writes_per_op);
    let shape = rg::RunShape {
        node,
        node_count: machine.topo.nodes.len(),
        remote_node,
        timed: pair.is_some(),
        oversubscribed,
    };
    let warnings = rg::warnings(shape, &rows, &transfers);
    let ns_of = |global: Global| transfers.iter().find(|t| t.global == global).map(|t| t.ns.median);
    let ns_per_invalidation = ns_of(Global::Remote);
    let doc = RemoteGlobalDocument {
        schema: REMOTE_GLOBAL_SCHEMA,
        run: lab::run_info(&machine, common, oversubscribed),
        node,
        remote_node,
        writes_per_op: args.writes_per_op,
        local_words_per_op: LOCAL_WORDS_PER_OP,
        results: rows,
        ns_per_invalidation,
        cycles_per_invalidation: ns_per_invalidation.zip(cycles_per_ns).map(|(ns, c)| ns * c),
        ns_per_invalidation_local: ns_of(Global::Local),
        transfers,
        models,
        cycles_per_ns,
        cycles_note,
        meaning,
        warnings,
    };
    let span = progress.span("configurations");
    lab::emit(
        root,
        &outputs,
        (&doc, span),
        lab_text::remote_global,
        lab_charts::remote_global,
    )
}

/// The workers' node (`--node`, else the first allowed CPU's), its CPUs
/// this process may use, and the remote node (`--remote-node`, else the
/// nearest other node with memory; `None` on a one-node machine).
fn nodes(machine: &Machine, args: &RemoteGlobalArgs) -> anyhow::Result<(u32, Vec<u32>, Option<u32>)> {
    let first_cpu = machine.allowed_cpus.ids()[0];
    let node = match args.node {
        Some(node) => node,
        None => machine.cpu_home_node(first_cpu).context("--node not given")?,
    };
    machine.check_node(node).context("--node")?;
    let cpus = machine.cpus_of(node);
    if cpus.is_empty() {
        bail!(
            "node {node} has no CPU this process may use (allowed or -C CPUs {}); pick another --node",
            machine.allowed_cpus
        );
    }
    let remote_node = match args.remote_node {
        Some(b) if b == node => bail!("--remote-node {b} is the workers' own node; pick another node"),
        Some(b) => {
            machine.check_node(b).context("--remote-node")?;
            Some(b)
        }
        None => numasleuth_analyze::topology::nearest_other_node(&machine.topo, node),
    };
    Ok((node, cpus, remote_node))
}

/// Where a line transfer is timed: each shared placement of the global,
/// with the line on the node that global sits on.
fn transfer_homes(placements: &[Global], node: u32, remote_node: Option<u32>) -> Vec<TransferStep> {
    placements
        .iter()
        .filter_map(|&global| {
            match global {
                Global::Local => Some(node),
                Global::Remote => remote_node,
                Global::PerThread => None,
            }
            .map(|home_node| TransferStep { global, home_node })
        })
        .collect()
}

/// The workload at every placement and thread count, until Ctrl-C.
fn measure_placements(grid: &RemoteGlobalGrid<'_>, progress: &mut Progress) -> anyhow::Result<Vec<rg::Measured>> {
    let label = |s: &RemoteGlobalStep| format!("{} global, {} threads", s.global.name(), s.threads);
    let done = grid
        .run(&progress.stop_token(), &mut |s| progress.step(&label(s)))
        .map_err(|e| step_error(e, |s| format!("remote global, {}", label(s))))?;
    Ok(done
        .into_iter()
        .map(|(step, outcome)| rg::Measured {
            global: step.global,
            threads: step.threads,
            cpus: cpus_for(grid.cpus, step.threads),
            global_node: outcome.placement.requested_node,
            placement_verified: outcome.placement.verified,
            raw: lab::raw(outcome.samples),
        })
        .collect())
}

/// A line transfer timed between `cpus` with the line on each home in
/// turn, until Ctrl-C; a transfer with no usable sample is left out.
fn transfers(
    homes: &[TransferStep],
    cpus: [u32; 2],
    samples: usize,
    progress: &mut Progress,
) -> anyhow::Result<Vec<rg::Transfer>> {
    let done = time_transfers(
        homes,
        cpus,
        (samples, TRANSFERS_PER_SAMPLE),
        &progress.stop_token(),
        &mut |s| progress.step(&format!("line transfer, line on node {}", s.home_node)),
    )
    .map_err(|e| {
        let home = e.step.home_node;
        match e.error {
            PhaseError::Setup(cause) => {
                anyhow::Error::new(cause).context(format!("cannot place a line on node {home}"))
            }
            PhaseError::Run(cause) => {
                anyhow::Error::new(cause).context(format!("timing a line transfer on node {home}"))
            }
        }
    })?;
    Ok(done
        .iter()
        .filter_map(|(step, pair)| {
            rg::Transfer::from_timing(step.global, step.home_node, cpus, &numasleuth_app::measured::pair(pair))
        })
        .collect())
}
