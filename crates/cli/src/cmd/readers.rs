//! `numasleuth readers`: which processes open the kernel files whose reads
//! take a lock the allocator, reclaim or page faults need, how often, and
//! who started them.
//!
//! Wiring only: the opens from `probe::readers` (kprobe, tracepoint or
//! fd scan), readers and the finding from `analyze::readers`, output from
//! `report::readers_*`. `doctor --measure` and `probe-latency` reuse
//! [`setup`] and [`check`].

use std::process::ExitCode;
use std::time::Duration;

use anyhow::{anyhow, bail};
use numasleuth_analyze::doctor::CheckId;
use numasleuth_analyze::findings::Diagnosis;
use numasleuth_analyze::readers::{finding, summarize};
use numasleuth_kernel::Root;
use numasleuth_model::readers::{LockFile, ReadersRaw};
use numasleuth_model::stop::Stop;
use numasleuth_probe::readers::{Choice, Origin, Session, Setup};
use numasleuth_report::export::TextJson;
use numasleuth_report::{readers_json, readers_text};

use super::readers_args::{ReadersArgs, ReadersMethod};
use super::stop_signal::stop_on_signals;
use numasleuth_model::stop::RunSpan;

/// The `doctor --measure` check.
pub const CHECK: CheckId = CheckId::LockTakingReaders;
/// `doctor --measure` watches this long: a reader every 200 ms shows ten
/// times, a monitor polling every few seconds may not show at all.
pub const DOCTOR_WINDOW: Duration = Duration::from_secs(2);
/// The fd scan's interval.
const SCAN_INTERVAL: Duration = Duration::from_millis(100);

/// What to watch, on every online CPU.
pub fn setup(root: &Root, files: Vec<LockFile>, method: ReadersMethod) -> anyhow::Result<Setup> {
    let topo = super::topology(root)?;
    let cpus: Vec<u32> = topo.online_cpus().iter().collect();
    if cpus.is_empty() {
        bail!("no online CPU found in the topology: nothing to attach perf events to");
    }
    Ok(Setup {
        files,
        cpus,
        choice: match method {
            ReadersMethod::Auto => Choice::Auto,
            ReadersMethod::Kprobe => Choice::Kprobe,
            ReadersMethod::Tracepoint => Choice::Tracepoint,
            ReadersMethod::FdScan => Choice::FdScan,
        },
        scan_interval: SCAN_INTERVAL,
    })
}

/// Watches for `duration`; the error is one line naming what is missing.
/// With `announce`, says on stderr what is watched and how, once it is.
pub fn observe(
    root: &Root,
    setup: &Setup,
    duration: Duration,
    stop: &Stop,
    announce: bool,
) -> anyhow::Result<ReadersRaw> {
    let session = Session::start(root, setup, Origin::now())
        .map_err(|why| anyhow!("cannot see who opens the lock-taking kernel files: {why}"))?;
    if announce {
        say!(
            "numasleuth: watching opens of {} for {:.1} s by {}…",
            setup.files.iter().map(|f| f.path()).collect::<Vec<_>>().join(", "),
            duration.as_secs_f64(),
            session.method().name()
        );
    }
    Ok(session.record(duration, stop))
}

/// `doctor --measure`: a short window, `lock-taking-reader` when anyone
/// read; skipped (with why) when nothing could watch.
pub fn check(root: &Root, diagnosis: &mut Diagnosis) {
    if !root.is_live() {
        diagnosis.skipped(CHECK, "opens happen now; --root names a snapshot");
        return;
    }
    let watched = setup(root, LockFile::ALL.to_vec(), ReadersMethod::Auto)
        .and_then(|s| observe(root, &s, DOCTOR_WINDOW, &stop_on_signals(), false));
    match watched {
        Ok(raw) => diagnosis.ran(CHECK, finding(&summarize(&raw)).into_iter().collect()),
        Err(e) => diagnosis.skipped_unreadable(CHECK, format!("{e:#}")),
    }
}

pub fn run(root: &Root, args: &ReadersArgs) -> anyhow::Result<ExitCode> {
    let outputs = args.output.plan_text_json(args.json)?;
    if !root.is_live() {
        bail!("readers watches opens on the live system; --root names a snapshot, which has none");
    }
    let setup = setup(root, args.files(), args.method)?;
    let stop = stop_on_signals();
    let start = std::time::Instant::now();
    let raw = observe(root, &setup, args.duration, &stop, true)?;
    let span = RunSpan::timed(start, Some(args.duration), &stop);
    let summary = summarize(&raw);
    let findings: Vec<_> = finding(&summary).into_iter().collect();
    let document = readers_json::build(&summary, &raw.opens, &findings);
    super::output::emit_run(
        root,
        &outputs,
        &TextJson::new(document, |_| readers_text::render(&summary, &findings)),
        Some(span),
    )?;
    Ok(ExitCode::SUCCESS)
}
