//! `numasleuth lab remote-global`: the database incident on this machine.
//! Workers on node A write a global K times per operation; the global sits
//! on node A, on node B, or per thread. Beside the throughput, a line
//! transfer is timed on its own (CAS ping-pong between two of A's CPUs,
//! line homed where the global was) and fed to the incident's model.

use std::process::ExitCode;

use anyhow::{bail, Context};
use numasleuth_analyze::lab::remote_global as rg;
use numasleuth_kernel::Root;
use numasleuth_measure::c2c::{measure_pair, HomeLine, Method, PairConfig};
use numasleuth_measure::lab::remote_global::{self as workload, Global, LOCAL_WORDS_PER_OP};
use numasleuth_report::lab_json::{RemoteGlobalDocument, REMOTE_GLOBAL_SCHEMA};
use numasleuth_report::{lab_charts, lab_text};

use super::lab;
use super::lab_args::RemoteGlobalArgs;
use super::measure_plan::{self, Machine, Progress};

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
    let shared: Vec<(Global, u32)> = placements
        .iter()
        .filter_map(|g| match g {
            Global::Local => Some((*g, node)),
            Global::Remote => remote_node.map(|b| (*g, b)),
            Global::PerThread => None,
        })
        .collect();
    let pair = (cpus.len() >= 2).then(|| [cpus[0], cpus[1]]);
    let total = placements.len() * counts.len() + pair.map_or(0, |_| shared.len());
    let mut progress = Progress::new(total as u64, "lab remote-global");
    let plan = Plan {
        node,
        remote_node,
        cpus: &cpus,
        counts: &counts,
    };
    let measured = measure_placements(args, &plan, &placements, &mut progress)?;
    let mut transfers = Vec::new();
    if let Some(pair) = pair {
        for &(global, home) in &shared {
            if progress.stopped() {
                break;
            }
            progress.step(&format!("line transfer, line on node {home}"));
            transfers.extend(transfer(global, home, pair, common.samples as usize)?);
        }
    }
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

/// Where the workers run and which thread counts to measure.
struct Plan<'a> {
    node: u32,
    remote_node: Option<u32>,
    cpus: &'a [u32],
    counts: &'a [usize],
}

/// The workload at every placement and thread count.
fn measure_placements(
    args: &RemoteGlobalArgs,
    plan: &Plan<'_>,
    placements: &[Global],
    progress: &mut Progress,
) -> anyhow::Result<Vec<rg::Measured>> {
    let mut measured = Vec::new();
    'grid: for &global in placements {
        for &threads in plan.counts {
            if progress.stopped() {
                break 'grid;
            }
            let label = format!("{} global, {threads} threads", global.name());
            progress.step(&label);
            let config = workload::Config {
                global,
                cpus: plan.cpus.to_vec(),
                threads,
                local_node: plan.node,
                remote_node: plan.remote_node,
                writes_per_op: args.writes_per_op,
                budget: lab::budget(&args.common),
                samples: args.common.samples as usize,
            };
            let outcome = workload::run(&config).with_context(|| format!("remote global, {label}"))?;
            measured.push(rg::Measured {
                global,
                threads,
                cpus: lab::cpus_for(plan.cpus, threads),
                global_node: outcome.placement.requested_node,
                placement_verified: outcome.placement.verified,
                raw: lab::raw(outcome.samples),
            });
        }
    }
    Ok(measured)
}

fn transfer(global: Global, home: u32, cpus: [u32; 2], samples: usize) -> anyhow::Result<Option<rg::Transfer>> {
    let line = HomeLine::allocate(home).with_context(|| format!("cannot place a line on node {home}"))?;
    let config = PairConfig {
        method: Method::Cas,
        cpu_a: cpus[0],
        cpu_b: cpus[1],
        samples,
        transfers_per_sample: TRANSFERS_PER_SAMPLE,
    };
    let pair = measure_pair(&line, config).with_context(|| format!("timing a line transfer on node {home}"))?;
    Ok(super::measure_raw::pair(&pair).summary().map(|ns| rg::Transfer {
        global,
        home_node: home,
        cpus,
        ns,
    }))
}
