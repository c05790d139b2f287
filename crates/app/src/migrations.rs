//! Thread moves between CPUs and nodes over a window, and what AutoNUMA
//! did meanwhile: the `sched_migrate_task` tracepoint, or a sampled view
//! where it cannot be used (`probe::migrations`), summarised per thread
//! (`analyze::migrations`). `migrations` prints it; `doctor -p` judges it.

use std::time::{Duration, Instant};

use numasleuth_analyze::findings::Finding;
use numasleuth_analyze::migrations::{
    findings, summarize, Method, MigrationsDocument, NumaBalancing, ThreadMigrations,
};
use numasleuth_kernel::procfs::process::{read_process_stat, ProcessError};
use numasleuth_kernel::Root;
use numasleuth_model::stop::{RunSpan, Stop};
use numasleuth_model::Topology;
use numasleuth_probe::migrations::{self as collect, Collected, Polling, Scope, TracedError};

use crate::env::TopologyError;
use crate::limits::{self, OutOfRange};
use crate::Observer;

/// How moves are followed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum How {
    /// The sched_migrate_task tracepoint where permitted, else sampled.
    Auto,
    /// Only the tracepoint: an error where it cannot be used.
    Tracepoint,
    /// Poll /proc/PID/task/*/stat (moves shorter than the interval are
    /// missed).
    Sampled,
}

/// One observation, as `migrations` and `doctor --pid` use it (and `top`
/// can: it is the count of moves per thread over a window).
pub struct Observed {
    pub method: Method,
    pub threads: Vec<ThreadMigrations>,
    pub numa: NumaBalancing,
    pub duration_s: f64,
    pub notes: Vec<String>,
}

/// `--method tracepoint` where the tracepoint cannot be used.
#[derive(Debug, thiserror::Error)]
#[error("cannot use the sched:sched_migrate_task tracepoint: {0}")]
pub struct TracepointUnusable(pub TracedError);

/// Watches `scope` for `duration` (or until `stop`): the tracepoint unless
/// `method` says otherwise or it cannot be used (then sampled, saying why).
pub fn observe(
    root: &Root,
    topo: &Topology,
    scope: Scope,
    (duration, method, interval): (Duration, How, Option<Duration>),
    stop: &Stop,
    observer: &dyn Observer,
) -> Result<Observed, TracepointUnusable> {
    let before = match scope {
        Scope::Process(pid) => collect::numa_tasks(root, pid).1,
        Scope::All => collect::vmstat_pages_migrated(root),
    };
    let interval = interval.unwrap_or(match scope {
        Scope::Process(_) => Duration::from_millis(10),
        Scope::All => Duration::from_millis(100),
    });
    let polling = |reason: String| Polling {
        duration,
        interval,
        reason,
    };
    let cpus: Vec<u32> = topo.online_cpus().iter().collect();
    let collected: Collected = match method {
        How::Sampled => collect::sampled(root, scope, polling("--method sampled was asked for".into()), stop),
        How::Tracepoint => collect::traced(root, scope, &cpus, duration, stop).map_err(TracepointUnusable)?,
        How::Auto => match collect::traced(root, scope, &cpus, duration, stop) {
            Ok(c) => c,
            Err(why) => {
                observer.progress(&format!(
                    "numasleuth: tracepoint unavailable ({why}); sampling /proc/PID/task/*/stat instead"
                ));
                collect::sampled(root, scope, polling(why.to_string()), stop)
            }
        },
    };
    let threads = summarize(&collected.paths, &topo.cpu_nodes(), collected.duration_s);
    Ok(Observed {
        method: collected.method,
        threads,
        numa: collect::numa_balancing(root, scope, before),
        duration_s: collected.duration_s,
        notes: collected.notes,
    })
}

/// `doctor --pid`'s two findings, from a short observation.
pub fn doctor_findings(
    root: &Root,
    topo: &Topology,
    pid: u32,
    duration: Duration,
    stop: &Stop,
    observer: &dyn Observer,
) -> Result<Vec<Finding>, TracepointUnusable> {
    let how = (duration, How::Auto, None);
    let seen = observe(root, topo, Scope::Process(pid), how, stop, observer)?;
    Ok(findings(pid, &seen.threads, &seen.numa, &seen.method, seen.duration_s))
}

/// What `migrations` is asked, with no clap in it.
pub struct MigrationsRequest {
    /// One process; `None`: every thread of the machine.
    pub pid: Option<u32>,
    pub duration: Duration,
    pub how: How,
    /// The sampled view's period; `None`: 10 ms for a process, 100 ms for all.
    pub interval: Option<Duration>,
}

#[derive(Debug, thiserror::Error)]
pub enum MigrationsError {
    #[error("migrations needs the live system: moves happen now, a snapshot (--root) has none")]
    NotLive,
    #[error("process {pid} is a kernel thread: use --all to see kernel threads' moves")]
    KernelThread { pid: u32 },
    #[error(transparent)]
    OutOfRange(#[from] OutOfRange),
    #[error(transparent)]
    Process(#[from] ProcessError),
    #[error(transparent)]
    Topology(#[from] TopologyError),
    #[error(transparent)]
    Tracepoint(#[from] TracepointUnusable),
}

/// The window watched, judged for one process (no findings for `--all`).
pub struct Migrations {
    pub document: MigrationsDocument,
    pub span: RunSpan,
}

/// `migrations`: the moves over the request's window, until it ends or
/// `stop` is requested.
pub fn run(
    root: &Root,
    request: &MigrationsRequest,
    stop: &Stop,
    observer: &dyn Observer,
) -> Result<Migrations, MigrationsError> {
    if !root.is_live() {
        return Err(MigrationsError::NotLive);
    }
    limits::duration(
        "the migrations duration",
        request.duration,
        (limits::SAMPLE_MIN, limits::SAMPLE_MAX),
    )?;
    if let Some(interval) = request.interval {
        limits::duration(
            "the migrations interval",
            interval,
            (limits::POLL_MIN, limits::POLL_MAX),
        )?;
    }
    let scope = match request.pid {
        Some(pid) if read_process_stat(root, pid)?.is_kernel_thread() => {
            return Err(MigrationsError::KernelThread { pid })
        }
        Some(pid) => Scope::Process(pid),
        None => Scope::All,
    };
    let read = crate::env::read_degraded(root)?;
    for warning in &read.warnings {
        observer.progress(&format!("numasleuth: warning: {warning}"));
    }
    observer.progress(&format!(
        "numasleuth: following thread moves {}…",
        crate::how_long(Some(request.duration))
    ));
    let start = Instant::now();
    let how = (request.duration, request.how, request.interval);
    let seen = observe(root, &read.topology, scope, how, stop, observer)?;
    let span = RunSpan::timed(start, Some(request.duration), stop);
    let findings = request.pid.map_or_else(Vec::new, |pid| {
        findings(pid, &seen.threads, &seen.numa, &seen.method, seen.duration_s)
    });
    let document = MigrationsDocument {
        pid: request.pid,
        method: seen.method,
        duration_s: seen.duration_s,
        threads: seen.threads,
        numa: seen.numa,
        findings,
        notes: seen.notes,
    };
    Ok(Migrations { document, span })
}
