//! `probe-latency`: one operation (fresh pages bound to a node, or 4 KiB
//! written to a file) issued on a fixed schedule (`measure`), with the
//! memory signals sampled and, as root, the lock-file readers recorded
//! beside it (`probe`); the latencies corrected for coordinated omission
//! and the spikes tied to what happened around them (`analyze`).

use std::path::PathBuf;
use std::time::Duration;

use numasleuth_analyze::latency_spikes::{spikes, Window};
use numasleuth_analyze::latency_summary::{spike_floors, summary};
use numasleuth_analyze::memwatch::{conditions, Event};
use numasleuth_analyze::probe_latency::{ProbeReaders, ProbeReport};
use numasleuth_analyze::readers::summarize;
use numasleuth_analyze::spike_readers::attach;
use numasleuth_kernel::Root;
use numasleuth_measure::probe_latency::ops::{AllocTouch, FileWrites, Operation, ALLOC_BYTES};
use numasleuth_measure::probe_latency::schedule::drive;
use numasleuth_model::readers::LockFile;
use numasleuth_model::stop::{RunSpan, Stop};
use numasleuth_model::Topology;
use numasleuth_probe::memory_signals::{Record, Sampler};
use numasleuth_probe::readers::error::{SpawnError, StartError};
use numasleuth_probe::readers::on_thread::Recorder;
use numasleuth_probe::readers::{Choice, Origin};

use crate::limits::{self, OutOfRange};
use crate::readers::ReadersError;
use crate::Observer;

/// The operation probed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Op {
    /// Map fresh pages, bind them to the node, touch each one, unmap.
    AllocTouch,
    /// Write 4 KiB into a file the probe creates (and removes).
    Write(PathBuf),
    /// Write 4 KiB and fsync, into a file the probe creates (and removes).
    Fsync(PathBuf),
}

impl Op {
    pub fn name(&self) -> &'static str {
        match self {
            Op::AllocTouch => "alloc-touch",
            Op::Write(_) => "write",
            Op::Fsync(_) => "fsync",
        }
    }
}

/// Whether `probe-latency` records readers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Want {
    /// `--readers`: fail when it cannot.
    Required,
    /// The default as root: record when possible, else say why.
    IfPossible,
    /// `--no-readers`, or not root.
    No,
}

impl Want {
    pub fn from_flags(readers: bool, no_readers: bool) -> Want {
        let root = numasleuth_kernel::identity::is_root();
        match (readers, no_readers) {
            (_, true) => Want::No,
            (true, false) => Want::Required,
            (false, false) if root => Want::IfPossible,
            (false, false) => Want::No,
        }
    }
}

/// What `numasleuth probe-latency` asks for.
pub struct ProbeRequest {
    pub op: Op,
    /// `alloc-touch`'s node; by default the first node with memory.
    pub node: Option<u32>,
    pub rate_per_sec: u64,
    pub duration: Duration,
    pub readers: Want,
}

#[derive(Debug, thiserror::Error)]
pub enum ProbeLatencyError {
    #[error("probe-latency measures the live system; --root names a snapshot, which has no latency to measure")]
    NotLive,
    #[error("node {id} does not exist on this machine (nodes: {nodes})")]
    NoSuchNode { id: u32, nodes: String },
    #[error("node {id} has no memory to allocate from")]
    NoMemory { id: u32 },
    #[error("no node with memory found")]
    NoMemoryNode,
    #[error("cannot allocate pages bound to node {node}: {error}")]
    Alloc { node: u32, error: std::io::Error },
    #[error("--node applies to --op alloc-touch only")]
    NodeWithFile,
    #[error("cannot create {shown}: {error}")]
    Create { shown: String, error: std::io::Error },
    #[error(transparent)]
    Readers(#[from] ReadersError),
    #[error("--readers: {0}")]
    ReadersRequired(SpawnError<StartError>),
    #[error("cannot start the memory-signal sampler: {0}")]
    Sampler(std::io::Error),
    #[error("{label} failed: {error}")]
    Failed { label: String, error: std::io::Error },
    #[error("no operation completed (interrupted before the first one)")]
    NothingCompleted,
    #[error(transparent)]
    OutOfRange(#[from] OutOfRange),
}

/// The request's values within their limits, before anything is probed.
fn check(request: &ProbeRequest) -> Result<(), OutOfRange> {
    limits::count(
        "the probe rate per second",
        request.rate_per_sec,
        (1, limits::PROBE_RATE_MAX),
    )?;
    let window = (limits::PROBE_DURATION_MIN, limits::PROBE_DURATION_MAX);
    limits::duration("the probe duration", request.duration, window)?;
    if let Some(node) = request.node {
        limits::count("the node id", node, (0, limits::NODE_MAX))?;
    }
    Ok(())
}

/// The signal sampler takes at most ~3000 samples a run, at least 200 ms
/// apart (zoneinfo is read whole each time) and at most 30 s.
fn signal_interval(duration: Duration) -> Duration {
    (duration / 3000).clamp(Duration::from_millis(200), Duration::from_secs(30))
}

/// Probes as `request` says, until its duration or `stop`; the probe's
/// own file is removed before this returns.
pub fn probe(
    root: &Root,
    topology: &Topology,
    request: &ProbeRequest,
    stop: &Stop,
    observer: &dyn Observer,
) -> Result<(ProbeReport, RunSpan), ProbeLatencyError> {
    check(request)?;
    if !root.is_live() {
        return Err(ProbeLatencyError::NotLive);
    }
    let (mut op, label) = operation(topology, &request.op, request.node)?;
    let interval = signal_interval(request.duration);
    let origin = Origin::now();
    let start = origin.instant;
    let (recorder, readers_note) = readers_for_probe(root, topology, request, origin, observer)?;
    let sampler = Sampler::start(root.clone(), start, interval, conditions).map_err(ProbeLatencyError::Sampler)?;
    let recorded = drive(op.as_mut(), request.rate_per_sec, request.duration, start, stop);
    let signals = sampler.finish();
    let readers = recorder.and_then(Recorder::finish);
    // Removes the probe's own file before anything is printed.
    drop(op);
    let recorded = recorded.map_err(|error| ProbeLatencyError::Failed {
        label: label.clone(),
        error,
    })?;
    if recorded.corrected.is_empty() {
        return Err(ProbeLatencyError::NothingCompleted);
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
    let report = ProbeReport {
        op: label,
        rate_per_sec: request.rate_per_sec,
        duration_s: request.duration.as_secs_f64(),
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
        signal_notes: signal_notes(&signals),
        events: signals.events,
        readers: readers.map(|raw| ProbeReaders {
            summary: summarize(&raw),
            raw,
        }),
        readers_note,
    };
    Ok((report, RunSpan::timed(start, Some(request.duration), stop)))
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

fn operation(
    topology: &Topology,
    op: &Op,
    node: Option<u32>,
) -> Result<(Box<dyn Operation>, String), ProbeLatencyError> {
    match op {
        Op::AllocTouch => {
            let node = pick_node(topology, node)?;
            let page_bytes = numasleuth_kernel::pages::page_size_bytes() as usize;
            let alloc = AllocTouch::new(node, page_bytes).map_err(|error| ProbeLatencyError::Alloc { node, error })?;
            let label = format!(
                "alloc-touch ({} KiB of fresh pages bound to node {node})",
                ALLOC_BYTES / 1024
            );
            Ok((Box::new(alloc), label))
        }
        Op::Write(path) | Op::Fsync(path) => {
            if node.is_some() {
                return Err(ProbeLatencyError::NodeWithFile);
            }
            let sync = matches!(op, Op::Fsync(_));
            let shown = numasleuth_kernel::error::quote(&path.display().to_string());
            let writes = FileWrites::create(path, sync).map_err(|error| ProbeLatencyError::Create {
                shown: shown.clone(),
                error,
            })?;
            Ok((Box::new(writes), format!("{} 4 KiB to {shown}", op.name())))
        }
    }
}

/// `--node`, checked against the machine; by default the first node with
/// memory.
fn pick_node(topology: &Topology, asked: Option<u32>) -> Result<u32, ProbeLatencyError> {
    match asked {
        Some(id) => match topology.node(id) {
            None => Err(ProbeLatencyError::NoSuchNode {
                id,
                nodes: topology
                    .nodes
                    .iter()
                    .map(|n| n.id.to_string())
                    .collect::<Vec<_>>()
                    .join(", "),
            }),
            Some(n) if !n.may_hold_memory() => Err(ProbeLatencyError::NoMemory { id }),
            Some(_) => Ok(id),
        },
        None => topology
            .nodes
            .iter()
            .find(|n| n.may_hold_memory())
            .map(|n| n.id)
            .ok_or(ProbeLatencyError::NoMemoryNode),
    }
}

/// Starts recording for the probe from `origin`: the recorder, or why
/// none runs (`Err` only when `--readers` insisted).
fn readers_for_probe(
    root: &Root,
    topology: &Topology,
    request: &ProbeRequest,
    origin: Origin,
    observer: &dyn Observer,
) -> Result<(Option<Recorder>, Option<String>), ProbeLatencyError> {
    let want = request.readers;
    if want == Want::No {
        return Ok((
            None,
            Some("not recorded (--no-readers, or not root; --readers asks for it)".into()),
        ));
    }
    let setup = crate::readers::setup(topology, LockFile::ALL.to_vec(), Choice::Auto)?;
    // The probe may overrun its duration while the last operations finish.
    match Recorder::start(root.clone(), setup, origin, request.duration + Duration::from_secs(60)) {
        Ok((recorder, method)) => {
            observer.progress(&format!("numasleuth: recording lock-file readers by {}", method.name()));
            Ok((Some(recorder), None))
        }
        Err(why) if want == Want::Required => Err(ProbeLatencyError::ReadersRequired(why)),
        Err(why) => Ok((None, Some(format!("not recorded: {why}")))),
    }
}
