//! `numasleuth runs -n N -- CMD`: run a workload N times, each started
//! pinned on a CPU taken in turn, sample where its memory and threads are
//! after a settle time (inspect's model), and say whether the metric is
//! bimodal and which observation explains the modes.
//!
//! Wiring only: resolve the start CPUs against this process's affinity,
//! collect raw runs (measure's series), turn them into rows and analyse
//! them (analyze), report.

use std::collections::BTreeMap;
use std::ffi::OsStr;
use std::process::ExitCode;
use std::time::Instant;

use anyhow::{bail, Context};
use numasleuth_analyze::runs::attributes::{placement, Attributes, Placement};
use numasleuth_analyze::runs::metric::MetricPattern;
use numasleuth_analyze::runs::row::{metric, run_row, spread, MetricMissing, RawRun};
use numasleuth_analyze::runs::{analyze, RunRow};
use numasleuth_kernel::{IdList, Root};
use numasleuth_measure::affinity::allowed_cpus;
use numasleuth_measure::runs::{run_series, RunRecord, Series};
use numasleuth_model::stop::{RunSpan, Stop};
use numasleuth_model::Topology;
use numasleuth_report::runs_text::RunsReport;

use super::output::Aliases;
use super::runs_args::{RunsArgs, StartCpus};

/// Output lines shown with an error about a run's output.
const ERROR_TAIL_LINES: usize = 10;

/// The placement sample of a run, or why there is none.
type Sample = Result<Placement, String>;

pub fn run(root: &Root, args: &RunsArgs) -> anyhow::Result<ExitCode> {
    let outputs = args.output.plan::<RunsReport>(Aliases {
        json: args.json,
        svg: args.svg.as_deref(),
        ..Aliases::default()
    })?;
    super::refuse_under_snapshot(root, "runs")?;
    let pattern = args.metric.as_deref().map(MetricPattern::new).transpose()?;
    let topology = super::topology(root)?;
    let allowed = allowed_cpus().context("cannot read which CPUs this process may use")?;
    let start_cpus = resolve_start_cpus(&args.start_cpus, &allowed, &topology)?;
    let command: Vec<String> = args.command.iter().map(|a| a.to_string_lossy().into_owned()).collect();
    let setup = Setup {
        topology: &topology,
        allowed: &allowed,
        start_cpus: &start_cpus,
        pattern: pattern.as_ref(),
    };
    let stop = super::stop_signal::stop_on_signals();
    let start = Instant::now();
    let Done {
        rows,
        program_path,
        perf_refusals,
        stopped_in,
    } = run_all(root, args, &setup, &stop)?;
    let span = RunSpan::stepped(start, rows.len() as u64, u64::from(args.runs), "runs");
    let lower_is_better = pattern.is_none() || args.lower_is_better;
    let attributes: Vec<Attributes> = rows.iter().map(|r| r.attributes.clone()).collect();
    let metrics: Vec<f64> = rows.iter().map(|r| r.metric).collect();
    let analysis = analyze(&metrics, &attributes, lower_is_better);
    let mut missing: Vec<String> = perf_refusals
        .iter()
        .map(|(why, runs)| format!("CPU migrations of {runs} run(s): {why}"))
        .collect();
    if let Some(number) = stopped_in {
        missing.push(format!(
            "runs {number} to {}: stopped by a signal (Ctrl-C or SIGTERM) during run {number}, whose process group \
             was killed",
            args.runs
        ));
    }
    let unsampled = rows.iter().filter(|r| !r.placement_sampled).count();
    if unsampled > 0 {
        missing.push(format!(
            "placement of {unsampled} of {} runs (exited before --settle {} ms, or could not be read; see the run notes)",
            rows.len(),
            args.settle.as_millis()
        ));
    }
    let report = RunsReport {
        command: &command,
        metric_name: args.metric.as_deref().unwrap_or("wall_s"),
        from_output: pattern.is_some(),
        lower_is_better,
        rows: &rows,
        analysis: &analysis,
        program: program_path.as_deref(),
        missing: &missing,
    };
    super::output::emit_run(root, &outputs, &report, Some(span))?;
    Ok(ExitCode::SUCCESS)
}

/// What every run needs from the setup.
struct Setup<'a> {
    topology: &'a Topology,
    allowed: &'a [u32],
    start_cpus: &'a [u32],
    pattern: Option<&'a MetricPattern>,
}

/// Every run's row, the program's path once seen, and why perf could not
/// count CPU migrations (with how many runs each reason hit).
struct Done {
    rows: Vec<RunRow>,
    program_path: Option<String>,
    perf_refusals: BTreeMap<String, usize>,
    /// Ctrl-C (or SIGTERM) stopped the series during this run.
    stopped_in: Option<usize>,
}

/// Runs the command `--runs` times through measure's series, each started
/// on the next start CPU, until a stop: the run under way is then ended
/// and left out (it is not a whole run), and the runs done so far are the
/// result. Each run's row is derived in analyze.
fn run_all(root: &Root, args: &RunsArgs, setup: &Setup<'_>, stop: &Stop) -> anyhow::Result<Done> {
    let matches = |line: &str| setup.pattern.is_some_and(|p| p.matches(line));
    let (program, rest) = args.command.split_first().context("no command given after --")?;
    let rest: Vec<&OsStr> = rest.iter().map(|a| a.as_os_str()).collect();
    let series = Series {
        program,
        args: &rest,
        start_cpus: setup.start_cpus,
        runs: args.runs,
        release: args.release_after.map(|d| (d, setup.allowed)),
        settle: args.settle,
        matches: &matches,
        timeout: args.timeout,
        stop,
    };
    let mut rows = Vec::new();
    let mut program_path = None;
    let mut perf_refusals: BTreeMap<String, usize> = BTreeMap::new();
    let starting = |number: usize, cpu: u32| {
        let node = setup.topology.node_of_cpu(cpu);
        say!(
            "numasleuth: run {number}/{} on CPU {cpu} (node {})…",
            args.runs,
            node.map_or("?".into(), |n| n.to_string())
        );
    };
    let finished = |index: usize, record: RunRecord<Sample>| -> anyhow::Result<()> {
        let number = index + 1;
        if record.timed_out {
            bail!(
                "run {number} (of {}, on CPU {}) did not finish within --timeout {} ms and was killed",
                args.runs,
                record.start_cpu,
                args.timeout.map_or(0, |t| t.as_millis())
            );
        }
        if args.verbose {
            for line in &record.output.tail {
                say!("  run {number} | {line}");
            }
        }
        let metric = metric_of(&record, setup.pattern, number, args.runs)?;
        if let Some(Ok(p)) = &record.sample {
            program_path = program_path.take().or(p.program.clone());
        }
        if let Err(why) = &record.cpu_migrations {
            *perf_refusals.entry(why.to_string()).or_default() += 1;
        }
        rows.push(run_row(raw_run(index, setup.topology, record), metric));
        Ok(())
    };
    let stopped_in = run_series(&series, |pid| sample(root, pid, setup.topology), starting, finished)?;
    if let Some(number) = stopped_in {
        // The workload's group is gone; the runs that finished are reported.
        say!("numasleuth: run {number} was stopped before it finished; it is left out");
        if rows.is_empty() {
            bail!("stopped by a signal during run {number}, before any run finished; its process group was killed");
        }
    }
    Ok(Done {
        rows,
        program_path,
        perf_refusals,
        stopped_in,
    })
}

/// The parts of a run's record its row is derived from.
fn raw_run(index: usize, topology: &Topology, record: RunRecord<Sample>) -> RawRun {
    RawRun {
        index,
        start_cpu: record.start_cpu,
        start_node: topology.node_of_cpu(record.start_cpu),
        wall_ns: record.wall_ns,
        exit: record.exit,
        cpu_migrations: record.cpu_migrations.map_err(|why| why.to_string()),
        placement: record.sample,
        release_failures: record.release.map(|r| r.failed).unwrap_or_default(),
        output_note: record.output.note,
    }
}

/// The start CPUs in the order runs take them. `spread` deals the allowed
/// CPUs out node by node (node 0's first, node 1's first, node 0's
/// second, …) so consecutive runs start on different nodes.
fn resolve_start_cpus(wanted: &StartCpus, allowed: &[u32], topology: &Topology) -> anyhow::Result<Vec<u32>> {
    let allowed_list = IdList::new(allowed.to_vec());
    match wanted {
        StartCpus::List(cpus) => {
            if let Some(bad) = cpus.iter().find(|c| !allowed_list.contains(**c)) {
                bail!("start CPU {bad} is not one this process may run on ({allowed_list})");
            }
            Ok(cpus.clone())
        }
        StartCpus::Spread => Ok(spread(allowed, |cpu| topology.node_of_cpu(cpu))),
    }
}

/// Where the workload's memory and threads are, from the same model
/// `inspect` builds; a run that is exiting has nothing left to place.
fn sample(root: &Root, pid: u32, topology: &Topology) -> Sample {
    match super::inspect::model(root, pid, false, topology) {
        Ok(model) if model.state == 'Z' => Err("exited before the settle time".into()),
        Ok(model) => Ok(placement(&model)),
        Err(e) => Err(format!("could not sample placement: {e:#}")),
    }
}

fn show_tail(record: &RunRecord<Sample>) -> String {
    let tail = &record.output.tail;
    let shown = &tail[tail.len().saturating_sub(ERROR_TAIL_LINES)..];
    for line in shown {
        say!("  | {line}");
    }
    format!(
        "its last {} of {} output lines are above",
        shown.len(),
        record.output.lines_total
    )
}

/// The run's metric (analyze's), or an error naming the run, how it
/// ended and what it printed; `number` is the run's number as shown (from 1).
fn metric_of(
    record: &RunRecord<Sample>,
    pattern: Option<&MetricPattern>,
    number: usize,
    runs: u32,
) -> anyhow::Result<f64> {
    let missing = match metric(pattern, record.wall_ns, record.output.last_match.as_ref()) {
        Ok(value) => return Ok(value),
        Err(missing) => missing,
    };
    let exit = match (record.exit.code, record.exit.signal) {
        (Some(code), _) => format!("exit code {code}"),
        (_, Some(signal)) => format!("killed by signal {signal}"),
        _ => "unknown exit".into(),
    };
    match missing {
        MetricMissing::NoMatch => {
            let where_ = show_tail(record);
            bail!("run {number} (of {runs}, {exit}) printed no line matching --metric; {where_}")
        }
        MetricMissing::NoNumber { line_number, line } => {
            bail!("run {number} ({exit}): output line {line_number} matches --metric but holds no number: `{line}`")
        }
    }
}
