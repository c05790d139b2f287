//! `lab remote-global`: the database incident on this machine. Workers on
//! node A write a global K times per operation; the global sits on node
//! A, on node B, or per thread. Beside the throughput, a line transfer is
//! timed on its own (CAS ping-pong between two of A's CPUs, line homed
//! where the global was) and fed to the incident's model.

use numasleuth_analyze::lab::documents::RemoteGlobalDocument;
use numasleuth_analyze::lab::remote_global as rg;
use numasleuth_measure::lab::grid::{cpus_for, time_transfers, RemoteGlobalGrid, RemoteGlobalStep, TransferStep};
use numasleuth_measure::lab::remote_global::{Global, LOCAL_WORDS_PER_OP};
use numasleuth_measure::steps::PhaseError;
use numasleuth_model::stop::{RunSpan, Stop};

use super::{LabError, LabRequest};
use crate::machine::{Machine, MachineError};
use crate::measured;
use crate::steps::{StepObserver, Steps};

/// Round trips averaged into one transfer sample.
const TRANSFERS_PER_SAMPLE: usize = 2000;

/// A `lab remote-global` run as asked for.
#[derive(Debug, Clone)]
pub struct RemoteGlobalRequest {
    pub common: LabRequest,
    /// Node A, whose CPUs run the workers; default the first allowed
    /// CPU's node.
    pub node: Option<u32>,
    /// Node B, which holds the remote global; default the nearest other
    /// node with memory.
    pub remote_node: Option<u32>,
    /// Writes to the global per operation.
    pub writes_per_op: u32,
}

/// Every placement of the global at every thread count until `stop`,
/// then a line transfer timed where each shared global sat, and the
/// incident's model fed with both.
pub fn run(
    machine: Machine,
    request: &RemoteGlobalRequest,
    stop: &Stop,
    observer: &mut dyn StepObserver,
) -> Result<(RemoteGlobalDocument, RunSpan), LabError> {
    let common = &request.common;
    let machine = super::narrowed(machine, common)?;
    let (node, cpus, remote_node) = nodes(&machine, request)?;
    let (counts, oversubscribed) = super::thread_counts(common, &cpus, Some(node))?;
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
        writes_per_op: request.writes_per_op,
        sampling: super::sampling(common),
    };
    let total = grid.steps().len() + homes.len();
    let mut steps = Steps::new(observer, stop, total as u64, "lab remote-global");
    let measured = measure_placements(&grid, &mut steps)?;
    let transfers = match pair {
        Some(pair) => transfers(&homes, pair, common.samples as usize, &mut steps)?,
        None => Vec::new(),
    };
    steps.finish();
    let span = steps.span("configurations");
    let shape = rg::RunShape {
        node,
        node_count: machine.topo.nodes.len(),
        remote_node,
        timed: pair.is_some(),
        oversubscribed,
    };
    let doc = document(&machine, request, shape, measured, transfers);
    Ok((doc, span))
}

/// The rows, the incident's model and what they mean, with the cycle
/// counter's rate read now.
fn document(
    machine: &Machine,
    request: &RemoteGlobalRequest,
    shape: rg::RunShape,
    measured: Vec<rg::Measured>,
    transfers: Vec<rg::Transfer>,
) -> RemoteGlobalDocument {
    let (cycles_per_ns, cycles_note) = measured::cycles();
    let writes_per_op = request.writes_per_op;
    let rows = rg::rows(measured);
    let models = rg::models(&rows, &transfers, writes_per_op, cycles_per_ns);
    let meaning = rg::meaning(&rows, &models, shape.remote_node.is_some(), writes_per_op);
    let warnings = rg::warnings(shape, &rows, &transfers);
    let ns_of = |global: Global| transfers.iter().find(|t| t.global == global).map(|t| t.ns.median);
    let ns_per_invalidation = ns_of(Global::Remote);
    RemoteGlobalDocument {
        run: super::run_info(machine, &request.common, shape.oversubscribed),
        node: shape.node,
        remote_node: shape.remote_node,
        writes_per_op,
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
    }
}

/// The workers' node (asked for, else the first allowed CPU's), its CPUs
/// this process may use, and the remote node (asked for, else the nearest
/// other node with memory; `None` on a one-node machine).
fn nodes(machine: &Machine, request: &RemoteGlobalRequest) -> Result<(u32, Vec<u32>, Option<u32>), LabError> {
    let first_cpu = *machine.allowed_cpus.ids().first().ok_or(MachineError::NoCpu)?;
    let node = match request.node {
        Some(node) => node,
        None => machine.cpu_home_node(first_cpu).map_err(LabError::NoNode)?,
    };
    machine.check_node(node).map_err(LabError::Node)?;
    let cpus = machine.cpus_of(node);
    if cpus.is_empty() {
        return Err(LabError::NodeWithoutCpus {
            node,
            allowed: machine.allowed_cpus.clone(),
        });
    }
    let remote_node = match request.remote_node {
        Some(b) if b == node => return Err(LabError::RemoteIsOwnNode(b)),
        Some(b) => {
            machine.check_node(b).map_err(LabError::RemoteNode)?;
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

/// The workload at every placement and thread count, until a stop.
fn measure_placements(grid: &RemoteGlobalGrid<'_>, steps: &mut Steps<'_>) -> Result<Vec<rg::Measured>, LabError> {
    let label = |s: &RemoteGlobalStep| format!("{} global, {} threads", s.global.name(), s.threads);
    let done = grid
        .run(&steps.stop_token(), &mut |s| steps.step(&label(s)))
        .map_err(|e| LabError::Configuration {
            experiment: "remote global",
            step: label(&e.step),
            cause: e.error,
        })?;
    Ok(done
        .into_iter()
        .map(|(step, outcome)| rg::Measured {
            global: step.global,
            threads: step.threads,
            cpus: cpus_for(grid.cpus, step.threads),
            global_node: outcome.placement.requested_node,
            placement_verified: outcome.placement.verified,
            raw: super::raw(outcome.samples),
        })
        .collect())
}

/// A line transfer timed between `cpus` with the line on each home in
/// turn, until a stop; a transfer with no usable sample is left out.
fn transfers(
    homes: &[TransferStep],
    cpus: [u32; 2],
    samples: usize,
    steps: &mut Steps<'_>,
) -> Result<Vec<rg::Transfer>, LabError> {
    let done = time_transfers(
        homes,
        cpus,
        (samples, TRANSFERS_PER_SAMPLE),
        &steps.stop_token(),
        &mut |s| steps.step(&format!("line transfer, line on node {}", s.home_node)),
    )
    .map_err(|e| {
        let node = e.step.home_node;
        match e.error {
            PhaseError::Setup(cause) => LabError::TransferLine { node, cause },
            PhaseError::Run(cause) => LabError::Transfer { node, cause },
        }
    })?;
    Ok(done
        .iter()
        .filter_map(|(step, pair)| rg::Transfer::from_timing(step.global, step.home_node, cpus, &measured::pair(pair)))
        .collect())
}
