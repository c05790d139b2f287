//! `numasleuth probe-latency`: one thread issues an operation at a fixed
//! intended rate and records each latency from its intended start
//! (corrected for coordinated omission) and from its actual start, while a
//! second thread samples the per-node memory signals; spikes are then
//! lined up against what the memory system did around them.
//!
//! Wiring only: the schedule and the operations are in
//! `measure::probe_latency`, the memory signals and the lock-file readers on
//! threads of their own (`probe::memory_signals`, `probe::readers::on_thread`),
//! percentiles in `analyze::latency_summary`,
//! spikes in `analyze::latency_spikes`, output in
//! `report::probe_latency`.

use std::process::ExitCode;
use std::time::Duration;

use anyhow::{bail, Context};
use numasleuth_analyze::latency_spikes::{spikes, Window};
use numasleuth_analyze::latency_summary::{spike_floors, summary};
use numasleuth_analyze::memwatch::{conditions, Event};
use numasleuth_analyze::readers::summarize;
use numasleuth_analyze::spike_readers::attach;
use numasleuth_kernel::Root;
use numasleuth_model::stop::RunSpan;
use numasleuth_model::Topology;
use numasleuth_probe::readers::on_thread::Recorder;
use numasleuth_probe::readers::Origin;
use numasleuth_report::probe_latency::{ProbeReaders, ProbeReport};

use super::output::Aliases;
use super::probe_args::{Op, ProbeLatencyArgs};
use super::stop_signal::stop_on_signals;
use numasleuth_measure::probe_latency::ops::{AllocTouch, FileWrites, Operation, ALLOC_BYTES};
use numasleuth_measure::probe_latency::schedule::drive;
use numasleuth_probe::memory_signals::{Record, Sampler};

/// The signal sampler takes at most ~3000 samples a run, at least 200 ms
/// apart (zoneinfo is read whole each time) and at most 30 s.
fn signal_interval(duration: Duration) -> Duration {
    (duration / 3000).clamp(Duration::from_millis(200), Duration::from_secs(30))
}

pub fn run(root: &Root, args: &ProbeLatencyArgs) -> anyhow::Result<ExitCode> {
    let outputs = args.output.plan::<ProbeReport>(Aliases {
        json: args.json,
        svg: args.svg.as_deref(),
        ..Aliases::default()
    })?;
    let op_kind = super::probe_args::op(args.op.as_deref()).map_err(anyhow::Error::msg)?;
    if !root.is_live() {
        bail!("probe-latency measures the live system; --root names a snapshot, which has no latency to measure");
    }
    // Before the file exists, so ^C can never leave it behind.
    let stop = stop_on_signals();
    let (mut op, label) = operation(root, &op_kind, args.node)?;
    let interval = signal_interval(args.duration);
    let origin = Origin::now();
    let start = origin.instant;
    let want = Want::from_flags(args.readers, args.no_readers);
    let (recorder, readers_note) = readers_for_probe(root, want, origin, args.duration)?;
    let sampler =
        Sampler::start(root.clone(), start, interval, conditions).context("cannot start the memory-signal sampler")?;
    let recorded = drive(op.as_mut(), args.rate, args.duration, start, &stop);
    let signals = sampler.finish();
    let readers = recorder.and_then(Recorder::finish);
    // Removes the probe's own file before anything is printed.
    drop(op);
    let recorded = recorded.with_context(|| format!("{label} failed"))?;
    if recorded.corrected.is_empty() {
        bail!("no operation completed (interrupted before the first one)");
    }
    let (corrected, uncorrected) = (summary(&recorded.corrected), summary(&recorded.uncorrected));
    let labels = spike_floors(&recorded.corrected, &corrected);
    let window = Window {
        before_s: 1.0,
        after_s: interval.as_secs_f64(),
    };
    let mut spikes = spikes(
        &recorded.buckets,
        corrected.percentiles_ns[0],
        &labels,
        &signals.events,
        window,
    );
    if let Some(raw) = &readers {
        attach(&mut spikes, raw, window.before_s);
    }
    let notes = signal_notes(&signals);
    let probe = ProbeReport {
        op: label,
        rate_per_sec: args.rate,
        duration_s: args.duration.as_secs_f64(),
        wall_s: recorded.wall.as_secs_f64(),
        samples: recorded.corrected.len(),
        not_issued: recorded.not_issued,
        interrupted: recorded.interrupted,
        corrected,
        uncorrected,
        bucket_s: recorded.bucket_ns as f64 / 1e9,
        buckets: recorded.buckets,
        spikes,
        signal_samples: signals.samples,
        signal_interval_s: interval.as_secs_f64(),
        signal_events: signals.events.len() as u64 + signals.events_dropped,
        signal_notes: notes,
        events: signals.events,
        readers: readers.map(|raw| ProbeReaders {
            summary: summarize(&raw),
            raw,
        }),
        readers_note,
    };
    let span = RunSpan::timed(start, Some(args.duration), &stop);
    super::output::emit_run(root, &outputs, &probe, Some(span))?;
    Ok(ExitCode::SUCCESS)
}

/// What limited the memory-signal sampler, if anything.
fn signal_notes(signals: &Record<Event>) -> Vec<String> {
    let mut notes = Vec::new();
    if let Some(error) = &signals.error {
        notes.push(format!("memory signals stopped: {error}"));
    }
    if signals.events_dropped > 0 {
        notes.push(format!("{} later events were not kept", signals.events_dropped));
    }
    notes
}

fn operation(root: &Root, op: &Op, node: Option<u32>) -> anyhow::Result<(Box<dyn Operation>, String)> {
    match op {
        Op::AllocTouch => {
            let topology = super::topology(root)?;
            let node = pick_node(&topology, node)?;
            let page_bytes = numasleuth_kernel::pages::page_size_bytes() as usize;
            let alloc = AllocTouch::new(node, page_bytes)
                .with_context(|| format!("cannot allocate pages bound to node {node}"))?;
            let label = format!(
                "alloc-touch ({} KiB of fresh pages bound to node {node})",
                ALLOC_BYTES / 1024
            );
            Ok((Box::new(alloc), label))
        }
        Op::Write(path) | Op::Fsync(path) => {
            if node.is_some() {
                bail!("--node applies to --op alloc-touch only");
            }
            let sync = matches!(op, Op::Fsync(_));
            let shown = numasleuth_kernel::error::quote(&path.display().to_string());
            let writes = FileWrites::create(path, sync).with_context(|| format!("cannot create {shown}"))?;
            Ok((Box::new(writes), format!("{} 4 KiB to {shown}", op.name())))
        }
    }
}

/// `--node`, checked against the machine; by default the first node with
/// memory.
fn pick_node(topology: &Topology, asked: Option<u32>) -> anyhow::Result<u32> {
    let ids = || {
        topology
            .nodes
            .iter()
            .map(|n| n.id.to_string())
            .collect::<Vec<_>>()
            .join(", ")
    };
    match asked {
        Some(id) => match topology.node(id) {
            None => bail!("node {id} does not exist on this machine (nodes: {})", ids()),
            Some(n) if !n.may_hold_memory() => bail!("node {id} has no memory to allocate from"),
            Some(_) => Ok(id),
        },
        None => topology
            .nodes
            .iter()
            .find(|n| n.may_hold_memory())
            .map(|n| n.id)
            .context("no node with memory found"),
    }
}

/// Whether `probe-latency` records readers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Want {
    /// `--readers`: fail when it cannot.
    Required,
    /// The default as root: record when possible, else say why.
    IfPossible,
    /// `--no-readers`, or not root.
    No,
}

impl Want {
    fn from_flags(readers: bool, no_readers: bool) -> Want {
        let root = numasleuth_kernel::identity::is_root();
        match (readers, no_readers) {
            (_, true) => Want::No,
            (true, false) => Want::Required,
            (false, false) if root => Want::IfPossible,
            (false, false) => Want::No,
        }
    }
}

/// Starts recording for a probe of `duration` from `origin`: the recorder,
/// or why none runs (`Err` only when `--readers` insisted).
fn readers_for_probe(
    root: &Root,
    want: Want,
    origin: Origin,
    duration: Duration,
) -> anyhow::Result<(Option<Recorder>, Option<String>)> {
    if want == Want::No {
        return Ok((
            None,
            Some("not recorded (--no-readers, or not root; --readers asks for it)".into()),
        ));
    }
    let files = numasleuth_model::readers::LockFile::ALL.to_vec();
    let setup = super::readers::setup(root, files, super::readers_args::ReadersMethod::Auto)?;
    // The probe may overrun its duration while the last operations finish.
    match Recorder::start(root.clone(), setup, origin, duration + Duration::from_secs(60)) {
        Ok((recorder, method)) => {
            say!("numasleuth: recording lock-file readers by {}", method.name());
            Ok((Some(recorder), None))
        }
        Err(why) if want == Want::Required => anyhow::bail!("--readers: {why}"),
        Err(why) => Ok((None, Some(format!("not recorded: {why}")))),
    }
}
