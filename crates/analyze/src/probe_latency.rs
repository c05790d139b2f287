//! `probe-latency`'s document: one operation issued on a fixed schedule,
//! its latencies corrected for coordinated omission beside the
//! uncorrected ones, the spikes with the memory signals and lock-file
//! readers around them. `app::probe_latency` fills it; `report` renders
//! it as text, JSON and an SVG timeline.

use crate::latency_spikes::{Bucket, Spike};
use crate::latency_summary::Summary;
use crate::memwatch::Event;

#[derive(Debug, Clone)]
pub struct ProbeReport {
    /// `alloc-touch (64 KiB bound to node 0)`, `fsync /tmp/x`.
    pub op: String,
    pub rate_per_sec: u64,
    pub duration_s: f64,
    pub wall_s: f64,
    pub samples: u64,
    pub not_issued: u64,
    pub interrupted: bool,
    pub corrected: Summary,
    pub uncorrected: Summary,
    pub bucket_s: f64,
    pub buckets: Vec<Bucket>,
    pub spikes: Vec<Spike>,
    pub signal_samples: u64,
    pub signal_interval_s: f64,
    pub signal_events: u64,
    /// The events themselves, for the JSON (which lists the first
    /// `report::probe_latency::JSON_EVENTS`).
    pub events: Vec<Event>,
    /// Why the memory signals are incomplete, if they are.
    pub signal_notes: Vec<String>,
    /// Opens of lock-taking kernel files during the run (`--readers`).
    pub readers: Option<ProbeReaders>,
    /// Why readers were not recorded, when they were not.
    pub readers_note: Option<String>,
}

/// What `--readers` recorded: the raw opens and who made them.
#[derive(Debug, Clone)]
pub struct ProbeReaders {
    pub summary: crate::readers::Summary,
    pub raw: numasleuth_model::readers::ReadersRaw,
}
