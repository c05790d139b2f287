//! `numasleuth c2c`: the core-to-core cache-line latency matrix, with the
//! contended line on a node the user chooses (`--home-node`).
//!
//! Pairs are measured once (A↔B, not also B↔A) and mirrored; on big
//! machines `--sample` keeps one CPU per core, cache domain or node so a
//! run finishes in minutes rather than hours.

use std::process::ExitCode;

use anyhow::{bail, Context};
use numasleuth_analyze::c2c;
use numasleuth_analyze::cpu_sample::{sample_cpus, CpuSample};
use numasleuth_analyze::siblings;
use numasleuth_analyze::stats::rows_spread_warning;
use numasleuth_kernel::Root;
use numasleuth_measure::c2c::{HomeLine, Method};
use numasleuth_measure::grids::{self, PairTiming};
use numasleuth_model::stop::RunSpan;
use numasleuth_report::c2c_json::{C2cDocument, C2cMethod, SCHEMA};
use numasleuth_report::measure_export::C2cReport;

use super::measure_args::{C2cArgs, MethodArg, SampleArg};
use super::measure_plan::{self, step_error, Machine, Progress};
use super::output::Aliases;
use numasleuth_app::measured as measure_raw;

pub fn run(root: &Root, args: &C2cArgs) -> anyhow::Result<ExitCode> {
    let outputs = args.output.plan::<C2cReport>(Aliases {
        json: args.json,
        csv: args.csv,
        ..Aliases::default()
    })?;
    let machine = measure_plan::machine(root, "c2c")?;
    let (cpus, sampling) = cpus(&machine, args)?;
    let home_node = match args.home_node {
        Some(node) => node,
        None => machine.cpu_home_node(cpus[0]).context("--home-node not given")?,
    };
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
    let Measured { matrix, span } = measured;
    let c2c::Matrix {
        latency_ns: matrix,
        raw_ns: raw,
        raw_timing,
        timer_overhead_ns: overhead,
        short_samples,
    } = matrix;
    let (cycles_per_ns, cycles_note) = measure_plan::cycles();
    let mut warnings = Vec::new();
    let pairs = (0..n).flat_map(|a| (a + 1..n).map(move |b| (a, b)));
    let summaries = pairs.filter_map(|(a, b)| Some((format!("CPU {}↔{}", cpus[a], cpus[b]), matrix[a][b].as_ref()?)));
    warnings.extend(rows_spread_warning("pairs", summaries));
    if short_samples > 0 {
        warnings.push(format!(
            "{short_samples} samples took no longer than the clock's own overhead and count as 0 ns; use more \
             --transfers per sample"
        ));
    }
    if !line.placement().verified {
        warnings.push(format!("the line could not be verified to be on node {home_node}"));
    }
    let siblings = siblings::check(&machine.topo, &cpus, &siblings::pair_medians(&matrix));
    warnings.extend(siblings.left_out);
    let suspected_siblings = siblings.pairs;
    let doc = C2cDocument {
        schema: SCHEMA,
        cpus,
        home_node,
        method: match method {
            Method::Cas => C2cMethod::Cas,
            Method::OneWay => C2cMethod::OneWay,
        },
        sampling,
        latency_ns: matrix,
        transfers_per_sample: transfers,
        timer_overhead_ns: overhead,
        cycles_per_ns,
        cycles_note,
        placement_verified: line.placement().verified,
        suspected_siblings,
        warnings,
        raw_latency_ns: args.raw.then_some(raw),
        raw_timing: args.raw.then_some(raw_timing),
    };
    super::output::emit_run(root, &outputs, &C2cReport(&doc), Some(span))?;
    Ok(ExitCode::SUCCESS)
}

/// Every pair of `cpus` with a line homed on `home_node`, quick sampling
/// and no raw samples kept: what `doctor --measure` compares with the
/// declared topology.
pub fn quick_matrix(cpus: &[u32], home_node: u32) -> anyhow::Result<c2c::Grid<numasleuth_analyze::stats::Summary>> {
    let line = HomeLine::allocate(home_node).with_context(|| format!("cannot place the line on node {home_node}"))?;
    Ok(measure_all(&line, cpus, (Method::Cas, 5, 200), false)?
        .matrix
        .latency_ns)
}

/// The matrix derived from every pair measured, and how far it got.
struct Measured {
    matrix: c2c::Matrix,
    /// Ctrl-C ends the run after the pair under way.
    span: RunSpan,
}

/// Measures every pair once (the matrix is symmetric) until Ctrl-C; the
/// analysis mirrors and summarises them, keeping the raw timing for
/// `--raw` when `keep_raw`.
fn measure_all(
    line: &HomeLine,
    cpus: &[u32],
    (method, samples, transfers): (Method, usize, usize),
    keep_raw: bool,
) -> anyhow::Result<Measured> {
    let timing = PairTiming {
        method,
        samples,
        transfers_per_sample: transfers,
    };
    let mut progress = Progress::new(grids::pairs(cpus.len()).len() as u64, "c2c");
    let done = grids::c2c_pairs(line, cpus, timing, &progress.stop_token(), &mut |p| {
        progress.step(&format!("CPU {}↔{}", cpus[p.a], cpus[p.b]));
    })
    .map_err(|e| step_error(e, |p| format!("CPUs {} and {}", cpus[p.a], cpus[p.b])))?;
    progress.finish();
    let timed = done
        .iter()
        .map(|(p, samples)| (p.a, p.b, measure_raw::pair(samples)))
        .collect();
    Ok(Measured {
        matrix: c2c::matrix(cpus.len(), timed, keep_raw),
        span: progress.span("CPU pairs"),
    })
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
        bail!("c2c needs at least two CPUs, and {}", leaves(&cpus));
    }
    Ok((cpus, sampling))
}

/// What a selection of fewer than two CPUs leaves, in words: the count
/// first, so `-C 0` does not read as "leaves 0".
fn leaves(cpus: &[u32]) -> String {
    match cpus {
        [] => "the selection leaves none".to_string(),
        [cpu] => format!("the selection leaves 1 (CPU {cpu})"),
        more => format!(
            "the selection leaves {} (CPUs {})",
            more.len(),
            numasleuth_kernel::human_list(more)
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::leaves;

    #[test]
    fn one_cpu_left_reads_as_one_not_as_its_number() {
        assert_eq!(leaves(&[0]), "the selection leaves 1 (CPU 0)");
        assert_eq!(leaves(&[]), "the selection leaves none");
        assert_eq!(leaves(&[3, 5]), "the selection leaves 2 (CPUs 3,5)");
    }
}
