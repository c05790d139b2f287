//! `pmu`: every event the kernel offers counted on a process or a
//! command, scaled for multiplexing, with IPC when the CPU counts cycles,
//! and why each other event could not be counted. The PMUs are read
//! (`kernel`), the events chosen (`analyze`), counted (`probe`), then
//! scaled and explained (`analyze`); the front-end renders the summary and
//! passes on the command's own exit status.

use std::ffi::OsString;
use std::time::Instant;

use numasleuth_analyze::pmu::plan::{plan, PlanError, Selection};
use numasleuth_analyze::pmu::{nothing_counted, summarize, Context, PmuSummary};
use numasleuth_kernel::sysfs::pmu::read_pmus;
use numasleuth_kernel::{ReadError, Root};
use numasleuth_model::perf::pmu::TargetRaw;
use numasleuth_model::stop::{RunSpan, Stop};
use numasleuth_probe::pmu::spawn::{self, ResolveError};
use numasleuth_probe::pmu::{count, CountSpec, PmuError, Target};

use crate::limits::{self, OutOfRange};
use crate::Observer;

/// What `pmu` is asked, with no clap in it.
pub struct PmuRequest {
    /// `None` when neither a process nor a command was given.
    pub target: Option<Target>,
    pub events: Selection,
    /// Threads of a process counted at most.
    pub max_threads: usize,
    /// The `PATH` a command is looked up on.
    pub path: Option<OsString>,
}

/// What was counted, summarised.
pub struct Counted {
    pub summary: PmuSummary,
    /// The target as it ended (a command's exit status).
    pub target: TargetRaw,
    /// How much of a timed watch ran; `None` for a command.
    pub span: Option<RunSpan>,
}

/// Why nothing was counted.
#[derive(Debug, thiserror::Error)]
pub enum PmuCountError {
    #[error("pmu counts events on the live system; --root names a snapshot, where nothing runs to count")]
    NotLive,
    #[error("cannot list the PMUs")]
    Pmus(#[source] ReadError),
    #[error(transparent)]
    Plan(#[from] PlanError),
    #[error("give --pid PID (with --duration D, or until Ctrl-C), or a command after `--`")]
    NoTarget,
    #[error("no such process: {pid} (it does not exist or has exited)")]
    NoSuchProcess { pid: u32 },
    #[error("cannot run `{program}`: {why}")]
    CannotRun { program: String, why: ResolveError },
    #[error(transparent)]
    Count(#[from] PmuError),
    /// Every event failed to open: the reason, for the one line printed.
    #[error("{0}")]
    NothingCounted(String),
    #[error(transparent)]
    OutOfRange(#[from] OutOfRange),
}

/// The request's values within their limits, before anything is opened.
fn check(request: &PmuRequest) -> Result<(), OutOfRange> {
    limits::count(
        "the threads counted at most",
        request.max_threads,
        (1, limits::THREADS_MAX as usize),
    )?;
    if let Some(Target::Pid { pid, duration }) = &request.target {
        limits::count("the process id", *pid, (1, limits::PID_MAX))?;
        if let Some(duration) = duration {
            limits::duration("the count's duration", *duration, (limits::PMU_MIN, limits::WATCH_MAX))?;
        }
    }
    Ok(())
}

/// Counts until the target's duration ends, the command exits, or `stop`
/// (a command is passed it as SIGINT, since its process group does not
/// get the terminal's Ctrl-C). `observer` hears what is counted on what
/// before the counting starts.
pub fn run(root: &Root, request: PmuRequest, stop: &Stop, observer: &dyn Observer) -> Result<Counted, PmuCountError> {
    check(&request)?;
    if !root.is_live() {
        return Err(PmuCountError::NotLive);
    }
    let readings = read_pmus(root).map_err(PmuCountError::Pmus)?;
    let plan = plan(&readings, &request.events)?;
    let paranoid = numasleuth_kernel::procfs::settings::perf_event_paranoid(root);
    let target = request.target.ok_or(PmuCountError::NoTarget)?;
    // Checked before the progress line, so a typo is one error line.
    match &target {
        Target::Pid { pid, .. } if !root.exists(&format!("proc/{pid}")) => {
            return Err(PmuCountError::NoSuchProcess { pid: *pid });
        }
        Target::Command { argv } => {
            spawn::resolve(&argv[0], request.path.as_deref()).map_err(|why| PmuCountError::CannotRun {
                program: argv[0].to_string_lossy().into_owned(),
                why,
            })?;
        }
        Target::Pid { .. } => {}
    }
    let (what, planned) = match &target {
        Target::Pid { pid, duration } => (format!("process {pid} {}", crate::how_long(*duration)), Some(*duration)),
        Target::Command { argv } => (format!("`{}` until it exits", argv[0].to_string_lossy()), None),
    };
    observer.progress(&format!("numasleuth: counting {} events on {what}…", plan.events.len()));
    let start = Instant::now();
    let spec = CountSpec {
        target,
        events: plan.events,
        max_threads: request.max_threads,
    };
    let raw = count(&spec, stop)?;
    let span = planned.map(|planned| RunSpan::timed(start, planned, stop));
    let context = Context {
        not_tried: plan.not_tried,
        notes: plan.notes,
        paranoid,
    };
    let summary = summarize(&raw, context);
    if let Some(why) = nothing_counted(&summary) {
        return Err(PmuCountError::NothingCounted(why));
    }
    Ok(Counted {
        summary,
        target: raw.target,
        span,
    })
}
