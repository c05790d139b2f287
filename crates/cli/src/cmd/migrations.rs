//! `numasleuth migrations (PID | --all)`: each thread's moves between CPUs
//! and nodes over a window, and what AutoNUMA did meanwhile.
//!
//! Wiring only: topology (`model`) for the node of each CPU, the moves
//! from the tracepoint or a sampled view (`probe::migrations`), counts and
//! findings (`analyze::migrations`), output (`report`).

use std::process::ExitCode;
use std::time::{Duration, Instant};

use anyhow::bail;
use numasleuth_analyze::findings::Finding;
use numasleuth_analyze::migrations::{findings, summarize, Method, NumaBalancing, ThreadMigrations};
use numasleuth_kernel::procfs::process::read_process_stat;
use numasleuth_kernel::Root;
use numasleuth_model::stop::{RunSpan, Stop};
use numasleuth_model::Topology;
use numasleuth_report::{migrations_json, migrations_text};

use super::hot_args::{MigrationMethod, MigrationsArgs};
use numasleuth_probe::migrations::{self as collect, Collected, Polling, Scope};
use numasleuth_report::export::TextJson;

/// One observation, as `migrations` and `doctor --pid` use it (and `top`
/// can: it is the count of moves per thread over a window).
pub struct Observed {
    pub method: Method,
    pub threads: Vec<ThreadMigrations>,
    pub numa: NumaBalancing,
    pub duration_s: f64,
    pub notes: Vec<String>,
}

/// Watches `scope` for `duration` (or until `stop`): the tracepoint unless
/// `method` says otherwise or it cannot be used (then sampled, saying why).
pub fn observe(
    root: &Root,
    topo: &Topology,
    scope: Scope,
    (duration, method, interval): (Duration, MigrationMethod, Option<Duration>),
    stop: &Stop,
) -> anyhow::Result<Observed> {
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
        MigrationMethod::Sampled => {
            collect::sampled(root, scope, polling("--method sampled was asked for".into()), stop)
        }
        MigrationMethod::Tracepoint => collect::traced(root, scope, &cpus, duration, stop)
            .map_err(|why| anyhow::anyhow!("cannot use the sched:sched_migrate_task tracepoint: {why}"))?,
        MigrationMethod::Auto => match collect::traced(root, scope, &cpus, duration, stop) {
            Ok(c) => c,
            Err(why) => {
                say!("numasleuth: tracepoint unavailable ({why}); sampling /proc/PID/task/*/stat instead");
                collect::sampled(root, scope, polling(why), stop)
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
) -> anyhow::Result<Vec<Finding>> {
    let how = (duration, MigrationMethod::Auto, None);
    let seen = observe(root, topo, Scope::Process(pid), how, stop)?;
    Ok(findings(pid, &seen.threads, &seen.numa, &seen.method, seen.duration_s))
}

pub fn run(root: &Root, args: &MigrationsArgs) -> anyhow::Result<ExitCode> {
    let outputs = args.output.plan_text_json(args.json)?;
    if !root.is_live() {
        bail!("migrations needs the live system: moves happen now, a snapshot (--root) has none");
    }
    let scope = match args.process() {
        Some(pid) => {
            if read_process_stat(root, pid)?.is_kernel_thread() {
                bail!("process {pid} is a kernel thread: use --all to see kernel threads' moves");
            }
            Scope::Process(pid)
        }
        None => Scope::All,
    };
    let topo = super::topology(root)?;
    say!(
        "numasleuth: following thread moves {}…",
        super::stop_signal::how_long(Some(args.duration))
    );
    let stop = super::stop_signal::stop_on_signals();
    let start = Instant::now();
    let seen = observe(root, &topo, scope, (args.duration, args.method, args.interval), &stop)?;
    let span = RunSpan::timed(start, Some(args.duration), &stop);
    let pid = args.process();
    let found = pid.map_or_else(Vec::new, |p| {
        findings(p, &seen.threads, &seen.numa, &seen.method, seen.duration_s)
    });
    let document = migrations_json::build(
        pid,
        &seen.method,
        seen.duration_s,
        &seen.threads,
        &seen.numa,
        &found,
        &seen.notes,
    );
    let view = migrations_text::View {
        pid,
        method: &seen.method,
        duration_s: seen.duration_s,
        threads: &seen.threads,
        numa: &seen.numa,
        findings: &found,
        notes: &seen.notes,
    };
    super::output::emit_run(
        root,
        &outputs,
        &TextJson::new(document, |layout| migrations_text::render(&view, layout)),
        Some(span),
    )?;
    Ok(ExitCode::SUCCESS)
}
