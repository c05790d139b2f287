//! `numasleuth c2c`: the core-to-core cache-line latency matrix, with the
//! contended line on a node the user chooses (`--home-node`).
//!
//! Pairs are measured once (A↔B, not also B↔A) and mirrored; on big
//! machines `--sample` keeps one CPU per core, cache domain or node so a
//! run finishes in minutes rather than hours.

use std::collections::BTreeSet;
use std::process::ExitCode;

use anyhow::{bail, Context};
use numasleuth_analyze::stats::SPREAD_LIMIT;
use numasleuth_analyze::timing::TimedSamples;
use numasleuth_kernel::Root;
use numasleuth_measure::c2c::{measure_pair, HomeLine, Method, PairConfig};
use numasleuth_report::c2c_json::{C2cDocument, SCHEMA};
use numasleuth_report::measure_export::C2cReport;

use super::measure_args::{C2cArgs, MethodArg, SampleArg};
use super::measure_plan::{self, Machine, Progress};
use super::measure_raw;
use super::output::Aliases;

/// Above this many CPUs, `--sample auto` keeps one per cache domain.
const AUTO_ALL_LIMIT: usize = 64;

pub fn run(root: &Root, args: &C2cArgs) -> anyhow::Result<ExitCode> {
    let outputs = args.output.plan::<C2cReport>(Aliases {
        json: args.json,
        csv: args.csv,
        ..Aliases::default()
    })?;
    let machine = measure_plan::machine(root, "c2c")?;
    let chosen: Vec<u32> = match &args.cpus {
        Some(list) => {
            for cpu in list.iter() {
                machine.check_cpu(cpu)?;
            }
            list.iter().collect()
        }
        None => machine.allowed_cpus.iter().collect(),
    };
    let (cpus, sampling) = select(&machine, chosen, args.sample);
    if cpus.len() < 2 {
        bail!(
            "c2c needs at least two CPUs, and the selection leaves {}",
            numasleuth_kernel::IdList::new(cpus.clone())
        );
    }
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
    let measured = measure_all(&line, &cpus, (method, samples, transfers), args.raw)?;
    let Measured {
        matrix,
        raw,
        raw_timing,
        overhead,
        noisy,
        short_samples,
    } = measured;
    let (cycles_per_ns, cycles_note) = measure_plan::cycles();
    let mut warnings = Vec::new();
    if let Some(worst) = noisy.iter().max_by(|x, y| x.2.total_cmp(&y.2)) {
        warnings.push(format!(
            "{} of {} pairs spread wider than {:.0}% between p10 and p90 (worst CPU {}↔{}: {:.0}%); the machine was busy \
             or is a noisy VM, so treat those cells as rough",
            noisy.len(),
            n * (n - 1) / 2,
            SPREAD_LIMIT * 100.0,
            worst.0,
            worst.1,
            worst.2 * 100.0
        ));
    }
    if short_samples > 0 {
        warnings.push(format!(
            "{short_samples} samples took no longer than the clock's own overhead and count as 0 ns; use more \
             --transfers per sample"
        ));
    }
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
        raw_timing: args.raw.then_some(raw_timing),
    };
    super::output::emit(root, &outputs, &C2cReport(&doc))?;
    Ok(ExitCode::SUCCESS)
}

type Grid<T> = Vec<Vec<Option<T>>>;

/// Every pair's figures, and what the warnings need.
struct Measured {
    matrix: Grid<numasleuth_analyze::stats::Summary>,
    raw: Grid<Vec<f64>>,
    raw_timing: Grid<TimedSamples>,
    overhead: Option<f64>,
    /// (CPU a, CPU b, relative spread) of pairs too noisy to trust.
    noisy: Vec<(u32, u32, f64)>,
    short_samples: usize,
}

/// Measures every pair once (the matrix is symmetric), deriving each
/// cell from the raw timing; `keep_raw` keeps those for `--raw`.
fn measure_all(
    line: &HomeLine,
    cpus: &[u32],
    (method, samples, transfers): (Method, usize, usize),
    keep_raw: bool,
) -> anyhow::Result<Measured> {
    let n = cpus.len();
    let mut m = Measured {
        matrix: vec![vec![None; n]; n],
        raw: vec![vec![None; n]; n],
        raw_timing: vec![vec![None; n]; n],
        overhead: None,
        noisy: Vec::new(),
        short_samples: 0,
    };
    let mut progress = Progress::new((n * (n - 1) / 2) as u64, "c2c");
    for a in 0..n {
        for b in a + 1..n {
            progress.step(&format!("CPU {}↔{}", cpus[a], cpus[b]));
            let config = PairConfig {
                method,
                cpu_a: cpus[a],
                cpu_b: cpus[b],
                samples,
                transfers_per_sample: transfers,
            };
            let pair = measure_pair(line, config).with_context(|| format!("CPUs {} and {}", cpus[a], cpus[b]))?;
            m.overhead = Some(pair.timer_overhead_ns);
            let timing = measure_raw::pair(&pair);
            let summary = timing.summary();
            m.short_samples += timing.at_or_below_overhead();
            if let Some(s) = summary.filter(|s| s.relative_spread() > SPREAD_LIMIT) {
                m.noisy.push((cpus[a], cpus[b], s.relative_spread()));
            }
            (m.matrix[a][b], m.matrix[b][a]) = (summary, summary);
            if keep_raw {
                let latency_ns = timing.ns_per_op();
                (m.raw[a][b], m.raw[b][a]) = (Some(latency_ns.clone()), Some(latency_ns));
                (m.raw_timing[a][b], m.raw_timing[b][a]) = (Some(timing.clone()), Some(timing));
            }
        }
    }
    progress.finish();
    Ok(m)
}

/// Keeps the first CPU of each group that `key` puts it in.
fn first_per<K: Ord>(cpus: Vec<u32>, key: impl Fn(u32) -> K) -> Vec<u32> {
    let mut seen = BTreeSet::new();
    cpus.into_iter().filter(|&cpu| seen.insert(key(cpu))).collect()
}

/// Which CPUs stand for the machine, and the mode's name for the output.
fn select(machine: &Machine, cpus: Vec<u32>, sample: SampleArg) -> (Vec<u32>, &'static str) {
    let topo = &machine.topo;
    let cpu_info = |cpu: u32| topo.cpus.iter().find(|c| c.id == cpu);
    match sample {
        SampleArg::Auto if cpus.len() <= AUTO_ALL_LIMIT => (cpus, "all"),
        SampleArg::All => (cpus, "all"),
        SampleArg::Core => {
            let key = |cpu: u32| match cpu_info(cpu) {
                Some(c) => match (&c.thread_siblings, c.package, c.core) {
                    (Some(siblings), _, _) if !siblings.is_empty() => (0, siblings.ids()[0], 0),
                    (_, Some(package), Some(core)) => (1, package, core),
                    _ => (2, cpu, 0),
                },
                None => (2, cpu, 0),
            };
            (first_per(cpus, key), "core")
        }
        SampleArg::Node => (first_per(cpus, |cpu| machine.node_of_cpu(cpu)), "node"),
        SampleArg::Cache | SampleArg::Auto => {
            let top = topo
                .caches
                .iter()
                .filter(|c| c.kind != "Instruction")
                .map(|c| c.level)
                .max();
            let domains: Vec<_> = topo
                .caches
                .iter()
                .filter(|c| Some(c.level) == top && c.kind != "Instruction")
                .collect();
            let key = |cpu: u32| {
                domains
                    .iter()
                    .position(|d| d.cpus.contains(cpu))
                    .map_or((1, cpu), |d| (0, d as u32))
            };
            (first_per(cpus, key), "cache")
        }
    }
}
