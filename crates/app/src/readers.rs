//! `readers`: which processes open the kernel files whose reads take a
//! lock the allocator, reclaim or page faults need, how often, and who
//! started them. The opens come from `probe::readers` (kprobe, tracepoint
//! or fd scan), the readers and the finding from `analyze::readers`.
//! `doctor --measure` runs [`check`]; `probe-latency` records beside its
//! operations from [`setup`].

use std::time::{Duration, Instant};

use numasleuth_analyze::doctor::CheckId;
use numasleuth_analyze::findings::{Diagnosis, Finding};
use numasleuth_analyze::readers::{finding, summarize, Summary};
use numasleuth_kernel::Root;
use numasleuth_model::readers::{LockFile, ReadersRaw};
use numasleuth_model::stop::{RunSpan, Stop};
use numasleuth_model::Topology;
use numasleuth_probe::readers::error::StartError;
use numasleuth_probe::readers::{Choice, Origin, Session, Setup};

use crate::limits;
use crate::Observer;

/// The `doctor --measure` check.
pub const CHECK: CheckId = CheckId::LockTakingReaders;
/// `doctor --measure` watches this long: a reader every 200 ms shows ten
/// times, a monitor polling every few seconds may not show at all.
pub const DOCTOR_WINDOW: Duration = Duration::from_secs(2);
/// The fd scan's interval.
const SCAN_INTERVAL: Duration = Duration::from_millis(100);

#[derive(Debug, thiserror::Error)]
pub enum ReadersError {
    #[error("readers watches opens on the live system; --root names a snapshot, which has none")]
    NotLive,
    #[error("no online CPU found in the topology: nothing to attach perf events to")]
    NoOnlineCpu,
    #[error("cannot see who opens the lock-taking kernel files: {0}")]
    Unwatchable(StartError),
    #[error(transparent)]
    OutOfRange(#[from] crate::limits::OutOfRange),
}

/// What to watch, on every online CPU.
pub fn setup(topology: &Topology, files: Vec<LockFile>, choice: Choice) -> Result<Setup, ReadersError> {
    let cpus: Vec<u32> = topology.online_cpus().iter().collect();
    if cpus.is_empty() {
        return Err(ReadersError::NoOnlineCpu);
    }
    Ok(Setup {
        files,
        cpus,
        choice,
        scan_interval: SCAN_INTERVAL,
    })
}

/// Watches for `duration`; the error is one line naming what is missing.
/// An `observer` hears what is watched and how, once it is.
fn observe(
    root: &Root,
    setup: &Setup,
    duration: Duration,
    stop: &Stop,
    observer: Option<&dyn Observer>,
) -> Result<ReadersRaw, ReadersError> {
    let session = Session::start(root, setup, Origin::now()).map_err(ReadersError::Unwatchable)?;
    if let Some(observer) = observer {
        observer.progress(&format!(
            "numasleuth: watching opens of {} for {:.1} s by {}…",
            setup.files.iter().map(|f| f.path()).collect::<Vec<_>>().join(", "),
            duration.as_secs_f64(),
            session.method().name()
        ));
    }
    Ok(session.record(duration, stop))
}

/// `doctor --measure`: a short window, `lock-taking-reader` when anyone
/// read; skipped (with why) when nothing could watch.
pub fn check(root: &Root, topology: &Topology, stop: &Stop, diagnosis: &mut Diagnosis) {
    if !root.is_live() {
        diagnosis.skipped(CHECK, "opens happen now; --root names a snapshot");
        return;
    }
    let watched = setup(topology, LockFile::ALL.to_vec(), Choice::Auto)
        .and_then(|s| observe(root, &s, DOCTOR_WINDOW, stop, None));
    match watched {
        Ok(raw) => diagnosis.ran(CHECK, finding(&summarize(&raw)).into_iter().collect()),
        Err(e) => diagnosis.skipped_unreadable(CHECK, e.to_string()),
    }
}

/// What `numasleuth readers` asks for.
pub struct ReadersRequest {
    pub files: Vec<LockFile>,
    pub choice: Choice,
    pub duration: Duration,
}

/// A watch's opens, who read, the finding, and how long it ran.
pub struct Watched {
    pub raw: ReadersRaw,
    pub summary: Summary,
    pub findings: Vec<Finding>,
    pub span: RunSpan,
}

/// `numasleuth readers`: watches for the request's duration (or until
/// `stop`), saying what it watches.
pub fn watch(
    root: &Root,
    topology: &Topology,
    request: ReadersRequest,
    stop: &Stop,
    observer: &dyn Observer,
) -> Result<Watched, ReadersError> {
    let window = (limits::SAMPLE_MIN, limits::SAMPLE_MAX);
    limits::duration("the watch duration", request.duration, window)?;
    if !root.is_live() {
        return Err(ReadersError::NotLive);
    }
    let setup = setup(topology, request.files, request.choice)?;
    let start = Instant::now();
    let raw = observe(root, &setup, request.duration, stop, Some(observer))?;
    let span = RunSpan::timed(start, Some(request.duration), stop);
    let summary = summarize(&raw);
    let findings = finding(&summary).into_iter().collect();
    Ok(Watched {
        raw,
        summary,
        findings,
        span,
    })
}
