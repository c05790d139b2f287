//! `numasleuth lab remote-global`: the database incident on this machine.
//! Workers on node A write a global K times per operation; the global sits
//! on node A, on node B, or per thread. Beside the throughput, a line
//! transfer is timed on its own (CAS ping-pong between two of A's CPUs,
//! line homed where the global was) and fed to the incident's model.

use std::process::ExitCode;

use anyhow::{bail, Context};
use numasleuth_analyze::lab::{self as verdict, remote_global as rg};
use numasleuth_analyze::stats::summarize;
use numasleuth_kernel::Root;
use numasleuth_measure::c2c::{measure_pair, HomeLine, Method, PairConfig};
use numasleuth_measure::lab::remote_global::{self as workload, Global, LOCAL_WORDS_PER_OP};
use numasleuth_report::lab_json::{RemoteGlobalDocument, REMOTE_GLOBAL_SCHEMA};
use numasleuth_report::lab_svg::{self, Panel, Reference, Series};
use numasleuth_report::lab_text;

use super::lab::{self, point};
use super::lab_args::RemoteGlobalArgs;
use super::measure_plan::{self, Machine, Progress};

/// Round trips averaged into one transfer sample.
const TRANSFERS_PER_SAMPLE: usize = 2000;

pub fn run(root: &Root, args: &RemoteGlobalArgs) -> anyhow::Result<ExitCode> {
    let common = &args.common;
    lab::check_output(common)?;
    let machine = measure_plan::machine(root, "lab remote-global")?;
    let first_cpu = machine.allowed_cpus.ids()[0];
    let node = args.node.unwrap_or_else(|| machine.node_of_cpu(first_cpu));
    machine.check_node(node).context("--node")?;
    let cpus = machine.cpus_of(node);
    if cpus.is_empty() {
        bail!(
            "node {node} has no CPU this process may use (allowed CPUs {}); pick another --node",
            machine.allowed_cpus
        );
    }
    let remote_node = match args.remote_node {
        Some(b) if b == node => bail!("--remote-node {b} is the workers' own node; pick another node"),
        Some(b) => {
            machine.check_node(b).context("--remote-node")?;
            Some(b)
        }
        None => nearest_other_node(&machine, node),
    };
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
    let mut measured = Vec::new();
    for &global in &placements {
        for &threads in &counts {
            let label = format!("{} global, {threads} threads", global.name());
            progress.step(&label);
            let config = workload::Config {
                global,
                cpus: cpus.clone(),
                threads,
                local_node: node,
                remote_node,
                writes_per_op: args.writes_per_op,
                budget: lab::budget(common),
                samples: common.samples as usize,
            };
            let outcome = workload::run(&config).with_context(|| format!("remote global, {label}"))?;
            measured.push(rg::Measured {
                global,
                threads,
                cpus: lab::cpus_for(&cpus, threads),
                global_node: outcome.placement.requested_node,
                placement_verified: outcome.placement.verified,
                raw: lab::raw(outcome.samples),
            });
        }
    }
    let mut transfers = Vec::new();
    if let Some(pair) = pair {
        for &(global, home) in &shared {
            progress.step(&format!("line transfer, line on node {home}"));
            transfers.extend(transfer(global, home, pair, common.samples as usize)?);
        }
    }
    progress.finish();
    let (cycles_per_ns, cycles_note) = measure_plan::cycles();
    let rows = rg::rows(measured);
    let models = rg::models(&rows, &transfers, args.writes_per_op, cycles_per_ns);
    let meaning = rg::meaning(&rows, &models, remote_node.is_some(), args.writes_per_op);
    let warnings = warnings(
        &machine,
        &rows,
        &transfers,
        remote_node,
        pair.is_some(),
        oversubscribed,
        node,
    );
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
    lab::emit(common, &doc, || lab_text::remote_global(&doc), || chart(&doc))
}

/// The other node with memory at the smallest SLIT distance from `node`.
fn nearest_other_node(machine: &Machine, node: u32) -> Option<u32> {
    let topo = &machine.topo;
    let distances = topo.node(node).map(|n| n.distances.clone()).unwrap_or_default();
    topo.nodes
        .iter()
        .enumerate()
        .filter(|(_, n)| n.id != node && machine.check_node(n.id).is_ok())
        .min_by_key(|(i, n)| (distances.get(*i).copied().flatten().unwrap_or(u32::MAX), n.id))
        .map(|(_, n)| n.id)
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
    Ok(summarize(&pair.latency_ns).map(|ns| rg::Transfer {
        global,
        home_node: home,
        cpus,
        ns,
    }))
}

fn warnings(
    machine: &Machine,
    rows: &[rg::Row],
    transfers: &[rg::Transfer],
    remote_node: Option<u32>,
    timed: bool,
    oversubscribed: bool,
    node: u32,
) -> Vec<String> {
    let mut warnings = Vec::new();
    if remote_node.is_none() {
        warnings.push(format!(
            "no other node with memory (this machine has {} node{}): the remote placement was skipped",
            machine.topo.nodes.len(),
            if machine.topo.nodes.len() == 1 { "" } else { "s" }
        ));
    }
    if !timed {
        warnings.push(format!(
            "node {node} has only one CPU this process may use, so no line transfer could be timed and the \
             bottleneck model has no input"
        ));
    }
    for row in rows.iter().filter(|r| !r.placement_verified) {
        warnings.push(format!(
            "the {} global could not be verified to be on node {} ({} threads)",
            row.global, row.global_node, row.threads
        ));
    }
    let summaries = rows
        .iter()
        .map(|r| (format!("{} global {} threads", r.global, r.threads), &r.ops_per_sec))
        .chain(
            transfers
                .iter()
                .map(|t| (format!("line transfer on node {}", t.home_node), &t.ns)),
        );
    warnings.extend(verdict::spread_warning(summaries));
    warnings.extend(verdict::cpu_share_warning(rows.iter().map(|r| {
        (
            format!("{} global {} threads", r.global, r.threads),
            r.cpu_share.as_ref(),
        )
    })));
    warnings.extend(lab::oversubscribed_warning(oversubscribed));
    warnings
}

/// One panel: throughput per placement against threads, with each
/// model ceiling as a dashed line in its placement's colour.
fn chart(doc: &RemoteGlobalDocument) -> Result<String, lab_svg::ChartError> {
    let colour = |global: Global| match global {
        Global::Local => 0,
        Global::Remote => 1,
        Global::PerThread => 2,
    };
    let mut series = Vec::new();
    for global in [Global::Local, Global::Remote, Global::PerThread] {
        let points: Vec<_> = doc
            .results
            .iter()
            .filter(|r| r.global == global)
            .map(|r| point(r.threads, &r.ops_per_sec))
            .collect();
        if !points.is_empty() {
            series.push(Series {
                name: format!("{global} global"),
                points,
                dashed: false,
                colour: colour(global),
            });
        }
    }
    let references = doc
        .models
        .iter()
        .map(|m| Reference {
            name: format!(
                "model ceiling, {} ({:.0} ns/invalidation)",
                m.global, m.ns_per_invalidation
            ),
            value: m.ceiling_ops_per_sec,
            colour: colour(m.global),
        })
        .collect();
    let panel = Panel {
        title: format!("{} writes per operation to one global", doc.writes_per_op),
        y_label: "operations per second, all threads".into(),
        series,
        references,
    };
    lab_svg::chart(
        &format!("numasleuth lab remote-global: workers on node {}", doc.node),
        &[panel],
        1,
    )
}
