//! One run of a workload for `runs`: started pinned on a CPU, optionally
//! released to the original CPUs after a delay, sampled once after a
//! settle time by a caller-supplied probe (inspect's model, in the CLI),
//! and waited for with its resource usage.
//!
//! Returns the raw record and never prints; whether the runs are bimodal
//! and why is decided in `numasleuth-analyze`.

pub mod child;
pub mod migrations;
pub mod output;
pub mod series;

use std::ffi::OsStr;
use std::time::{Duration, Instant};

use numasleuth_model::stop::Stop;
use serde::Serialize;

pub use child::{Exit, Release, Usage};
pub use output::Output;
pub use series::{run_series, Series};

use crate::error::MeasureError;

/// What to run and how.
pub struct RunSpec<'a> {
    pub program: &'a OsStr,
    pub args: &'a [&'a OsStr],
    pub start_cpu: u32,
    /// Widen every thread to these CPUs after this delay.
    pub release: Option<(Duration, &'a [u32])>,
    /// When to call the probe.
    pub settle: Duration,
    /// Whether an output line is a metric line.
    pub matches: &'a (dyn Fn(&str) -> bool + Sync),
    /// Kill the workload (SIGKILL) if it runs longer than this.
    pub timeout: Option<Duration>,
    /// A stop request (Ctrl-C) ends the workload's process group: SIGTERM,
    /// then SIGKILL after [`STOP_GRACE`].
    pub stop: &'a Stop,
}

/// How long a workload asked to end by a stop (SIGTERM to its group) may
/// take before the group is killed.
pub const STOP_GRACE: Duration = Duration::from_secs(2);

/// The raw record of one run; `S` is whatever the probe returned.
#[derive(Debug, Clone, Serialize)]
pub struct RunRecord<S> {
    pub start_cpu: u32,
    pub wall_ns: u64,
    pub exit: Exit,
    pub output: Output,
    pub release: Option<Release>,
    /// The probe's answer, or `None` when the workload exited before the
    /// settle time came.
    pub sample: Option<S>,
    pub sample_after_ms: Option<u64>,
    /// CPU migrations over the whole run (perf, inherited), or why not.
    pub cpu_migrations: Result<u64, migrations::CounterError>,
    /// Killed at `timeout`.
    pub timed_out: bool,
    /// Killed because a stop was requested.
    pub stopped: bool,
}

/// How often the wait looks at the stop request.
const STOP_POLL: Duration = Duration::from_millis(50);

enum Event {
    Release(Duration),
    Settle,
    Timeout,
}

/// Runs the workload once. `probe(pid)` is called at the settle time if
/// the workload still runs then; it is our unwaited child, so the PID
/// cannot be reused under the probe, though the process may be exiting.
pub fn run_once<S>(spec: &RunSpec<'_>, mut probe: impl FnMut(u32) -> S) -> Result<RunRecord<S>, MeasureError> {
    let program = spec.program.to_string_lossy().into_owned();
    let (read, write) = child::pipe().map_err(|e| MeasureError::Spawn {
        program: program.clone(),
        reason: format!("cannot create a pipe: {e}"),
    })?;
    let start = Instant::now();
    let child =
        child::spawn_pinned(spec.program, spec.args, spec.start_cpu, write).map_err(|e| MeasureError::Spawn {
            program: program.clone(),
            reason: spawn_reason(&e),
        })?;
    let pid = child.id();
    let group = child::Group::new(pid);
    let migrations = migrations::start(pid);
    // The child is reaped by wait4 below, not by `Child`, so that its
    // resource usage comes back with it.
    drop(child);
    let mut events = timeline(spec).into_iter().peekable();
    let (mut release, mut sample, mut sample_after_ms) = (None, None, None);
    let mut timed_out = false;
    let mut stop_asked: Option<Instant> = None;
    let (waited, output) = child::supervise(&group, &read, spec.matches, |_| {
        if spec.stop.requested() && !timed_out {
            end_on_stop(&group, &mut stop_asked);
        }
        let stopped = stop_asked.is_some();
        while let Some((_, event)) = events.next_if(|(at, _)| *at <= start.elapsed()) {
            match event {
                Event::Release(after) => {
                    let cpus = spec.release.map_or(&[][..], |(_, cpus)| cpus);
                    release = Some(child::widen_threads(pid, cpus, after));
                }
                Event::Settle if !stopped => {
                    sample_after_ms = Some(start.elapsed().as_millis() as u64);
                    sample = Some(probe(pid));
                }
                Event::Settle => {}
                Event::Timeout => {
                    timed_out = !stopped;
                    group.kill();
                }
            }
        }
        let next = events.peek().map(|(at, _)| at.saturating_sub(start.elapsed()));
        Some(next.map_or(STOP_POLL, |next| next.min(STOP_POLL)))
    })
    .map_err(|e| MeasureError::Invalid(format!("`{program}` (pid {pid}): {e}")))?;
    let (result, end) =
        waited.ok_or_else(|| MeasureError::Invalid("the waiting thread ended without an answer".into()))?;
    let exit = result.map_err(|e| MeasureError::Invalid(format!("cannot wait for `{program}` (pid {pid}): {e}")))?;
    Ok(RunRecord {
        start_cpu: spec.start_cpu,
        wall_ns: end.duration_since(start).as_nanos() as u64,
        exit,
        output,
        release,
        sample,
        sample_after_ms,
        cpu_migrations: migrations::finish(migrations),
        timed_out,
        stopped: stop_asked.is_some(),
    })
}

/// What happens when during a run, in order.
fn timeline(spec: &RunSpec<'_>) -> Vec<(Duration, Event)> {
    let mut events: Vec<(Duration, Event)> = Vec::new();
    if let Some((after, _)) = spec.release {
        events.push((after, Event::Release(after)));
    }
    events.push((spec.settle, Event::Settle));
    if let Some(limit) = spec.timeout {
        events.push((limit, Event::Timeout));
    }
    events.sort_by_key(|(at, _)| *at);
    events
}

/// A stop while the workload runs: its group is asked to end first
/// (SIGTERM, as a terminal's Ctrl-C would if the group shared it), and
/// killed once [`STOP_GRACE`] has passed.
fn end_on_stop(group: &child::Group, asked: &mut Option<Instant>) {
    match asked {
        None => {
            *asked = Some(Instant::now());
            group.terminate();
        }
        Some(at) if at.elapsed() >= STOP_GRACE => group.kill(),
        Some(_) => {}
    }
}

fn spawn_reason(error: &std::io::Error) -> String {
    match error.raw_os_error() {
        Some(libc::ENOENT) => "no such command (not a file, and not found in PATH)".into(),
        Some(libc::EACCES) => "permission denied (not executable?)".into(),
        Some(libc::EINVAL) => "the start CPU is offline or outside this process's cpuset".into(),
        _ => error.to_string(),
    }
}

#[cfg(test)]
pub(crate) mod tests;
