//! `numasleuth lab`: reproduce false sharing, lock scaling and the
//! remote-global bug on this machine, scaled to its CPUs and nodes.
//!
//! This module is stage two shared by the three experiments: it turns
//! what the user typed into thread counts and CPU orders this machine can
//! honour, refusing oversubscription unless asked (spinning waiters would
//! fight the lock holder for the CPU), and it writes the output.

use std::process::ExitCode;
use std::time::Duration;

use anyhow::bail;
use numasleuth_analyze::lab::Raw;
use numasleuth_kernel::Root;
use numasleuth_measure::lab::grid::Sampling;
use numasleuth_measure::lab::{Budget, RunSample};
use numasleuth_model::stop::RunSpan;
use numasleuth_report::lab_charts::LabReport;
use numasleuth_report::lab_json::RunInfo;
use numasleuth_report::lab_svg::ChartError;
use serde::Serialize;

use super::lab_args::{CommonArgs, Experiment, LabArgs, PlacementArg};
use super::measure_plan::Machine;
use super::output::{Aliases, Plan};

pub fn run(root: &Root, args: &LabArgs) -> anyhow::Result<ExitCode> {
    match &args.experiment {
        Experiment::FalseSharing(a) => super::lab_false_sharing::run(root, a),
        Experiment::Locks(a) => super::lab_locks::run(root, a),
        Experiment::RemoteGlobal(a) => super::lab_remote_global::run(root, a),
    }
}

/// The machine as `lab` may use it: its allowed CPUs, narrowed by `-C`.
pub fn machine(root: &numasleuth_kernel::Root, command: &str, common: &CommonArgs) -> anyhow::Result<Machine> {
    let mut machine = super::measure_plan::machine(root, command)?;
    machine.restrict_cpus(common.cpus.as_ref())?;
    Ok(machine)
}

/// Where the report goes, checked before any measuring starts, so a typo
/// in a path does not throw away minutes of samples.
pub fn outputs(common: &CommonArgs) -> anyhow::Result<Plan> {
    common.output.plan::<LabReport<'_, ()>>(Aliases {
        json: common.json,
        svg: common.svg.as_deref(),
        ..Aliases::default()
    })
}

/// The thread counts to run with `available` CPUs, and whether any
/// exceeds them (allowed only with `--oversubscribe`).
pub fn thread_counts(common: &CommonArgs, available: &[u32], what: &str) -> anyhow::Result<(Vec<usize>, bool)> {
    let n = available.len();
    let counts: Vec<usize> = match (common.threads, &common.thread_sweep) {
        (Some(count), _) => vec![count as usize],
        (None, Some(list)) => list.iter().map(|c| c as usize).collect(),
        (None, None) => {
            let mut counts: Vec<usize> = std::iter::successors(Some(1usize), |c| c.checked_mul(2))
                .take_while(|c| *c < n)
                .collect();
            counts.push(n.max(1));
            counts
        }
    };
    let most = counts.iter().copied().max().unwrap_or(1);
    if most > n && !common.oversubscribe {
        bail!(
            "{most} threads is more than the {n} CPU{} {what} ({}): threads would share CPUs, and a spinning \
             waiter can burn the time slice its lock holder needs. Use --threads or --thread-sweep with at most {n}, or pass \
             --oversubscribe to run anyway",
            if n == 1 { "" } else { "s" },
            cpu_list(available)
        );
    }
    Ok((counts, most > n))
}

/// Placements to run: as asked, or both where there is more than one
/// node to alternate between.
pub fn placements(machine: &Machine, asked: &[PlacementArg]) -> (Vec<PlacementArg>, Vec<String>) {
    let nodes_with_cpus = machine
        .topo
        .nodes
        .iter()
        .filter(|n| !machine.cpus_of(n.id).is_empty())
        .count();
    let mut warnings = Vec::new();
    let chosen = if asked.is_empty() {
        if nodes_with_cpus > 1 {
            vec![PlacementArg::Compact, PlacementArg::Spread]
        } else {
            vec![PlacementArg::Compact]
        }
    } else {
        let mut chosen: Vec<PlacementArg> = Vec::new();
        for placement in asked {
            if !chosen.contains(placement) {
                chosen.push(*placement);
            }
        }
        if nodes_with_cpus <= 1 && chosen.contains(&PlacementArg::Spread) {
            warnings.push(
                "this process's CPUs are all on one node, so spread placement uses the same CPUs as compact".into(),
            );
        }
        chosen
    };
    (chosen, warnings)
}

/// Allowed CPUs in placement order: compact fills each node before the
/// next; spread takes one CPU from each node in turn.
pub fn cpu_order(machine: &Machine, placement: PlacementArg) -> Vec<u32> {
    let per_node: Vec<Vec<u32>> = machine
        .topo
        .nodes
        .iter()
        .map(|n| machine.cpus_of(n.id))
        .filter(|cpus| !cpus.is_empty())
        .collect();
    let mut order: Vec<u32> = match placement {
        PlacementArg::Compact => per_node.concat(),
        PlacementArg::Spread => {
            let longest = per_node.iter().map(Vec::len).max().unwrap_or(0);
            (0..longest)
                .flat_map(|i| per_node.iter().filter_map(move |cpus| cpus.get(i).copied()))
                .collect()
        }
    };
    // CPUs the node files do not list (no NUMA sysfs) still run, last.
    for cpu in machine.allowed_cpus.iter() {
        if !order.contains(&cpu) {
            order.push(cpu);
        }
    }
    order
}

/// How long and how often each configuration is sampled.
pub fn sampling(common: &CommonArgs) -> Sampling {
    Sampling {
        budget: Budget::Time(Duration::from_millis(common.sample_ms)),
        samples: common.samples as usize,
    }
}

pub fn raw(samples: Vec<RunSample>) -> Vec<Raw> {
    samples
        .into_iter()
        .map(|s| Raw {
            span_ns: s.span_ns,
            ops_per_thread: s.ops_per_thread,
            cpu_ns_per_thread: s.cpu_ns_per_thread,
        })
        .collect()
}

pub fn run_info(machine: &Machine, common: &CommonArgs, oversubscribed: bool) -> RunInfo {
    RunInfo {
        cpu_model: machine.topo.cpu_name().map(str::to_string),
        nodes: machine.topo.nodes.iter().map(|n| n.id).collect(),
        allowed_cpus: machine.allowed_cpus.iter().collect(),
        samples_per_config: common.samples as usize,
        sample_ms: common.sample_ms,
        oversubscribed,
    }
}

/// The experiment's report, to stdout and every file asked for.
/// `span` says how many configurations ran, and whether Ctrl-C cut the
/// run short.
pub fn emit<D: Serialize>(
    root: &Root,
    outputs: &Plan,
    (document, span): (&D, RunSpan),
    text: fn(&D, &numasleuth_report::layout::TextLayout) -> String,
    chart: fn(&D) -> Result<String, ChartError>,
) -> anyhow::Result<ExitCode> {
    super::output::emit_run(root, outputs, &LabReport { document, text, chart }, Some(span))?;
    Ok(ExitCode::SUCCESS)
}

pub fn cpu_list(cpus: &[u32]) -> String {
    cpus.iter().copied().collect::<numasleuth_kernel::IdList>().to_string()
}
