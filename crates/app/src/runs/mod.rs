//! `runs`: a workload run N times, each started pinned on a CPU taken in
//! turn, where its memory and threads are sampled after a settle time
//! (the placement model of [`crate::process`]), and whether its metric is
//! bimodal and which observation explains the modes (`analyze::runs`).
//! The runs themselves are measure's series. See docs/runs.md.

mod error;

use std::collections::BTreeMap;
use std::ffi::{OsStr, OsString};
use std::time::{Duration, Instant};

use numasleuth_analyze::runs::attributes::{placement, Attributes, Placement};
use numasleuth_analyze::runs::metric::MetricPattern;
use numasleuth_analyze::runs::row::{metric, run_row, spread, MetricMissing, RawRun};
use numasleuth_analyze::runs::{analyze, Analysis, RunRow};
use numasleuth_kernel::{IdList, Root};
use numasleuth_measure::affinity::allowed_cpus;
use numasleuth_measure::runs::{run_series, RunRecord, Series};
use numasleuth_model::stop::{RunSpan, Stop};
use numasleuth_model::Topology;

use crate::limits::{self, OutOfRange};
use crate::Observer;
pub use error::RunsError;

/// Output lines shown with an error about a run's output.
const ERROR_TAIL_LINES: usize = 10;

/// The placement sample of a run, or why there is none.
type Sample = Result<Placement, String>;

/// Where each run starts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StartCpus {
    /// Every allowed CPU, alternating nodes.
    Spread,
    /// In the order typed, repeats allowed.
    List(Vec<u32>),
}

/// A series of runs, as `numasleuth runs` asks for it.
pub struct RunsRequest {
    /// The program and its arguments.
    pub command: Vec<OsString>,
    pub runs: u32,
    pub start_cpus: StartCpus,
    /// Widen the threads to every allowed CPU this long after the start.
    pub release_after: Option<Duration>,
    /// The metric's pattern; `None`: the wall time.
    pub metric: Option<String>,
    pub lower_is_better: bool,
    pub settle: Duration,
    pub timeout: Option<Duration>,
    /// Each run's last output lines go to the observer.
    pub verbose: bool,
}

/// What the series found, for the report.
pub struct RunsDone {
    pub rows: Vec<RunRow>,
    pub analysis: Analysis,
    pub lower_is_better: bool,
    /// The program's path, once a placement sample saw it.
    pub program_path: Option<String>,
    /// What is missing from the rows, and why.
    pub missing: Vec<String>,
    pub span: RunSpan,
}

/// Runs the series (until `stop`: the run under way is then ended and
/// left out) and analyses it; `observer` hears each run start.
pub fn run(
    root: &Root,
    topology: &Topology,
    request: &RunsRequest,
    stop: &Stop,
    observer: &dyn Observer,
) -> Result<RunsDone, RunsError> {
    check(request)?;
    let pattern = request.metric.as_deref().map(MetricPattern::new).transpose()?;
    let allowed = allowed_cpus().map_err(RunsError::Affinity)?;
    let start_cpus = resolve_start_cpus(&request.start_cpus, &allowed, topology)?;
    let setup = Setup {
        topology,
        allowed: &allowed,
        start_cpus: &start_cpus,
        pattern: pattern.as_ref(),
    };
    let start = Instant::now();
    let done = run_all(root, request, &setup, stop, observer)?;
    let span = RunSpan::stepped(start, done.rows.len() as u64, u64::from(request.runs), "runs");
    let lower_is_better = pattern.is_none() || request.lower_is_better;
    let attributes: Vec<Attributes> = done.rows.iter().map(|r| r.attributes.clone()).collect();
    let metrics: Vec<f64> = done.rows.iter().map(|r| r.metric).collect();
    let analysis = analyze(&metrics, &attributes, lower_is_better);
    let missing = missing(&done, request);
    Ok(RunsDone {
        rows: done.rows,
        analysis,
        lower_is_better,
        program_path: done.program_path,
        missing,
        span,
    })
}

/// The request's values within their limits, before anything runs.
fn check(request: &RunsRequest) -> Result<(), OutOfRange> {
    let fewest = numasleuth_analyze::runs::bimodal::MIN_RUNS as u32;
    limits::count("the run count", request.runs, (fewest, limits::RUNS_MAX))?;
    if let StartCpus::List(cpus) = &request.start_cpus {
        limits::list_len("the start CPUs", cpus.len(), limits::START_CPUS_MAX)?;
    }
    let delays = (limits::RUN_DELAY_MIN, limits::RUN_DELAY_MAX);
    limits::duration("the settle time", request.settle, delays)?;
    if let Some(after) = request.release_after {
        limits::duration("the release time", after, delays)?;
    }
    if let Some(timeout) = request.timeout {
        limits::duration(
            "a run's timeout",
            timeout,
            (limits::RUN_DELAY_MIN, limits::RUN_TIMEOUT_MAX),
        )?;
    }
    Ok(())
}

/// What the rows lack: CPU migrations perf would not count, the runs a
/// stop left out, placements not sampled.
fn missing(done: &Done, request: &RunsRequest) -> Vec<String> {
    let mut missing: Vec<String> = done
        .perf_refusals
        .iter()
        .map(|(why, runs)| format!("CPU migrations of {runs} run(s): {why}"))
        .collect();
    if let Some(number) = done.stopped_in {
        missing.push(format!(
            "runs {number} to {}: stopped by a signal (Ctrl-C or SIGTERM) during run {number}, whose process group \
             was killed",
            request.runs
        ));
    }
    let unsampled = done.rows.iter().filter(|r| !r.placement_sampled).count();
    if unsampled > 0 {
        missing.push(format!(
            "placement of {unsampled} of {} runs (exited before --settle {} ms, or could not be read; see the run notes)",
            done.rows.len(),
            request.settle.as_millis()
        ));
    }
    missing
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

/// Runs the command `runs` times through measure's series, each started
/// on the next start CPU, until a stop. Each run's row is derived in
/// analyze.
fn run_all(
    root: &Root,
    request: &RunsRequest,
    setup: &Setup<'_>,
    stop: &Stop,
    observer: &dyn Observer,
) -> Result<Done, RunsError> {
    let matches = |line: &str| setup.pattern.is_some_and(|p| p.matches(line));
    let (program, rest) = request.command.split_first().ok_or(RunsError::NoCommand)?;
    let rest: Vec<&OsStr> = rest.iter().map(|a| a.as_os_str()).collect();
    let series = Series {
        program,
        args: &rest,
        start_cpus: setup.start_cpus,
        runs: request.runs,
        release: request.release_after.map(|d| (d, setup.allowed)),
        settle: request.settle,
        matches: &matches,
        timeout: request.timeout,
        stop,
    };
    let mut done = Done {
        rows: Vec::new(),
        program_path: None,
        perf_refusals: BTreeMap::new(),
        stopped_in: None,
    };
    let starting = |number: usize, cpu: u32| {
        let node = setup.topology.node_of_cpu(cpu);
        observer.progress(&format!(
            "numasleuth: run {number}/{} on CPU {cpu} (node {})…",
            request.runs,
            node.map_or("?".into(), |n| n.to_string())
        ));
    };
    let finished =
        |index: usize, record: RunRecord<Sample>| finish_run(&mut done, index, record, request, setup, observer);
    let stopped_in = run_series(&series, |pid| sample(root, pid, setup.topology), starting, finished)?;
    if let Some(number) = stopped_in {
        // The workload's group is gone; the runs that finished are reported.
        observer.progress(&format!(
            "numasleuth: run {number} was stopped before it finished; it is left out"
        ));
        if done.rows.is_empty() {
            return Err(RunsError::StoppedBeforeAny { number });
        }
    }
    done.stopped_in = stopped_in;
    Ok(done)
}

/// One finished run's row, or why the series cannot go on.
fn finish_run(
    done: &mut Done,
    index: usize,
    record: RunRecord<Sample>,
    request: &RunsRequest,
    setup: &Setup<'_>,
    observer: &dyn Observer,
) -> Result<(), RunsError> {
    let number = index + 1;
    if record.timed_out {
        return Err(RunsError::TimedOut {
            number,
            runs: request.runs,
            cpu: record.start_cpu,
            timeout_ms: request.timeout.map_or(0, |t| t.as_millis()),
        });
    }
    if request.verbose {
        for line in &record.output.tail {
            observer.progress(&format!("  run {number} | {line}"));
        }
    }
    let metric = metric_of(&record, setup.pattern, (number, request.runs), observer)?;
    if let Some(Ok(p)) = &record.sample {
        done.program_path = done.program_path.take().or(p.program.clone());
    }
    if let Err(why) = &record.cpu_migrations {
        *done.perf_refusals.entry(why.to_string()).or_default() += 1;
    }
    done.rows.push(run_row(raw_run(index, setup.topology, record), metric));
    Ok(())
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
fn resolve_start_cpus(wanted: &StartCpus, allowed: &[u32], topology: &Topology) -> Result<Vec<u32>, RunsError> {
    let allowed_list = IdList::new(allowed.to_vec());
    match wanted {
        StartCpus::List(cpus) => {
            if let Some(bad) = cpus.iter().find(|c| !allowed_list.contains(**c)) {
                return Err(RunsError::StartCpuNotAllowed {
                    cpu: *bad,
                    allowed: allowed_list.to_string(),
                });
            }
            Ok(cpus.clone())
        }
        StartCpus::Spread => Ok(spread(allowed, |cpu| topology.node_of_cpu(cpu))),
    }
}

/// Where the workload's memory and threads are, from the same model
/// `inspect` builds; a run that is exiting has nothing left to place.
fn sample(root: &Root, pid: u32, topology: &Topology) -> Sample {
    match crate::process::model(root, pid, false, topology) {
        Ok(model) if model.state == 'Z' => Err("exited before the settle time".into()),
        Ok(model) => Ok(placement(&model)),
        Err(e) => Err(format!("could not sample placement: {e}")),
    }
}

/// The run's metric (analyze's), or an error naming the run, how it ended
/// and what it printed (its last lines go to the observer first);
/// `number` is the run's number as shown (from 1).
fn metric_of(
    record: &RunRecord<Sample>,
    pattern: Option<&MetricPattern>,
    (number, runs): (usize, u32),
    observer: &dyn Observer,
) -> Result<f64, RunsError> {
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
            let tail = &record.output.tail;
            let shown = &tail[tail.len().saturating_sub(ERROR_TAIL_LINES)..];
            for line in shown {
                observer.progress(&format!("  | {line}"));
            }
            Err(RunsError::NoMatch {
                number,
                runs,
                exit,
                shown: shown.len(),
                lines_total: record.output.lines_total,
            })
        }
        MetricMissing::NoNumber { line_number, line } => Err(RunsError::NoNumber {
            number,
            exit,
            line_number,
            line,
        }),
    }
}
