//! `numasleuth c2c`: the core-to-core cache-line latency matrix, with the
//! contended line on a node the user chooses (`--home-node`).
//!
//! Pairs are measured once (A↔B, not also B↔A) and mirrored; on big
//! machines `--sample` keeps one CPU per core, cache domain or node so a
//! run finishes in minutes rather than hours.

use std::process::ExitCode;

use anyhow::{bail, Context};
use numasleuth_analyze::cpu_sample::{sample_cpus, CpuSample};
use numasleuth_analyze::stats::{rows_spread_warning, summarize, Summary};
use numasleuth_kernel::Root;
use numasleuth_measure::c2c::{measure_pair, HomeLine, Method, PairConfig};
use numasleuth_report::c2c_json::{self, C2cDocument, SCHEMA};
use numasleuth_report::{c2c_text, csv};

use super::measure_args::{C2cArgs, MethodArg, SampleArg};
use super::measure_plan::{self, Machine, Progress};
use crate::output;

pub fn run(root: &Root, args: &C2cArgs) -> anyhow::Result<ExitCode> {
    let machine = measure_plan::machine(root, "c2c")?;
    let (cpus, sampling) = cpus(&machine, args)?;
    let home_node = args.home_node.unwrap_or_else(|| machine.node_of_cpu(cpus[0]));
    machine.check_node(home_node)?;
    let line = HomeLine::allocate(home_node).with_context(|| format!("cannot place the line on node {home_node}"))?;
    let samples = args.samples.map_or(if args.quick { 5 } else { 7 }, |n| n as usize);
    let transfers = args
        .transfers
        .map_or(if args.quick { 200 } else { 1000 }, |n| n as usize);
    let method = match args.method {
        MethodArg::Cas => Method::Cas,
        MethodArg::OneWay => Method::OneWay,
    };
    let n = cpus.len();
    let config = |cpu_a, cpu_b| PairConfig {
        method,
        cpu_a,
        cpu_b,
        samples,
        transfers_per_sample: transfers,
    };
    let Measured { matrix, raw, overhead } = measure_all(&line, &cpus, config, args.raw)?;
    let (cycles_per_ns, cycles_note) = measure_plan::cycles();
    let mut warnings = Vec::new();
    let pairs = (0..n).flat_map(|a| (a + 1..n).map(move |b| (a, b)));
    let summaries = pairs.filter_map(|(a, b)| Some((format!("CPU {}↔{}", cpus[a], cpus[b]), matrix[a][b].as_ref()?)));
    warnings.extend(rows_spread_warning("pairs", summaries));
    if !line.placement().verified {
        warnings.push(format!("the line could not be verified to be on node {home_node}"));
    }
    let doc = C2cDocument {
        schema: SCHEMA,
        cpus,
        home_node,
        method: match method {
            Method::Cas => "cas",
            Method::OneWay => "one-way",
        },
        sampling,
        latency_ns: matrix,
        transfers_per_sample: transfers,
        timer_overhead_ns: overhead,
        cycles_per_ns,
        cycles_note,
        placement_verified: line.placement().verified,
        warnings,
        raw_latency_ns: args.raw.then_some(raw),
    };
    if args.json {
        output::print(&c2c_json::render(&doc))?;
    } else if args.csv {
        output::print(&csv::c2c(&doc))?;
    } else {
        output::print(&c2c_text::render(&doc, measure_plan::colour()))?;
    }
    Ok(ExitCode::SUCCESS)
}

/// The CPUs asked for (all this process may use by default), thinned by
/// `--sample`, and the sampling mode's name.
fn cpus(machine: &Machine, args: &C2cArgs) -> anyhow::Result<(Vec<u32>, &'static str)> {
    let chosen: Vec<u32> = match &args.cpus {
        Some(list) => {
            for cpu in list.iter() {
                machine.check_cpu(cpu)?;
            }
            list.iter().collect()
        }
        None => machine.allowed_cpus.iter().collect(),
    };
    let mode = match args.sample {
        SampleArg::Auto => CpuSample::Auto,
        SampleArg::All => CpuSample::All,
        SampleArg::Core => CpuSample::Core,
        SampleArg::Cache => CpuSample::Cache,
        SampleArg::Node => CpuSample::Node,
    };
    let (cpus, sampling) = sample_cpus(&machine.topo, chosen, mode);
    if cpus.len() < 2 {
        bail!(
            "c2c needs at least two CPUs, and the selection leaves {}",
            numasleuth_kernel::IdList::new(cpus.clone())
        );
    }
    Ok((cpus, sampling))
}

/// Every pair's summary (mirrored), raw samples when kept, and the
/// timer overhead of the last pair.
struct Measured {
    matrix: Vec<Vec<Option<Summary>>>,
    raw: Vec<Vec<Option<Vec<f64>>>>,
    overhead: Option<f64>,
}

/// Each pair once (A↔B, not also B↔A), with a progress line.
fn measure_all(
    line: &HomeLine,
    cpus: &[u32],
    config: impl Fn(u32, u32) -> PairConfig,
    keep_raw: bool,
) -> anyhow::Result<Measured> {
    let n = cpus.len();
    let mut matrix = vec![vec![None; n]; n];
    let mut raw: Vec<Vec<Option<Vec<f64>>>> = vec![vec![None; n]; n];
    let mut progress = Progress::new((n * (n - 1) / 2) as u64, "c2c");
    let mut overhead = None;
    for a in 0..n {
        for b in a + 1..n {
            progress.step(&format!("CPU {}↔{}", cpus[a], cpus[b]));
            let pair = measure_pair(line, config(cpus[a], cpus[b]))
                .with_context(|| format!("CPUs {} and {}", cpus[a], cpus[b]))?;
            overhead = Some(pair.timer_overhead_ns);
            let summary = summarize(&pair.latency_ns);
            matrix[a][b] = summary;
            matrix[b][a] = summary;
            if keep_raw {
                raw[a][b] = Some(pair.latency_ns.clone());
                raw[b][a] = Some(pair.latency_ns);
            }
        }
    }
    progress.finish();
    Ok(Measured { matrix, raw, overhead })
}
