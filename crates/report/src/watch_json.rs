//! `watch --json`, schema `numasleuth.watch/1`.
//!
//! Kept names: `schema`, `pid`, `address` (hex string), `symbol`,
//! `duration_s`, `writes_total`, `writes_per_sec`, `writers[]` with
//! `function`, `file`, `line`, `samples`. Fields may be added, never
//! renamed. With `--rw`, `access` is `read-write` and "writes" count every
//! access.

use numasleuth_analyze::watch::{ThreadRate, WatchSummary};
use numasleuth_model::perf::watch::Access;
use serde::Serialize;

pub const SCHEMA: &str = "numasleuth.watch/1";

#[derive(Debug, Serialize)]
pub struct WatchJson<'a> {
    pub schema: &'static str,
    pub pid: u32,
    pub address: String,
    pub symbol: Option<&'a str>,
    pub object: Option<&'a str>,
    pub len_bytes: u64,
    pub access: Access,
    pub duration_s: f64,
    pub writes_total: u64,
    pub writes_per_sec: f64,
    pub threads: &'a [ThreadRate],
    pub writers: Vec<WriterJson<'a>>,
    pub samples_total: u64,
    pub lost_samples: u64,
    pub threads_missed: u64,
    pub process_exited: bool,
    pub notes: &'a [String],
}

#[derive(Debug, Serialize)]
pub struct WriterJson<'a> {
    pub function: Option<&'a str>,
    pub file: Option<&'a str>,
    pub line: Option<u32>,
    pub samples: u64,
    pub share: f64,
    pub path: Option<&'a str>,
    pub inlined_into: Option<&'a str>,
    pub symbol: Option<&'a str>,
    pub object: Option<&'a str>,
    pub addresses: Vec<String>,
    pub tids: &'a [u32],
}

pub fn build(s: &WatchSummary) -> WatchJson<'_> {
    WatchJson {
        schema: SCHEMA,
        pid: s.pid,
        address: format!("{:#x}", s.address),
        symbol: s.symbol.as_deref(),
        object: s.object.as_deref(),
        len_bytes: s.len_bytes,
        access: s.access,
        duration_s: s.duration_s,
        writes_total: s.writes_total,
        writes_per_sec: s.writes_per_sec,
        threads: &s.threads,
        writers: s
            .writers
            .iter()
            .map(|w| WriterJson {
                function: w.function.as_deref(),
                file: w.file.as_deref(),
                line: w.line,
                samples: w.samples,
                share: w.share,
                path: w.path.as_deref(),
                inlined_into: w.inlined_into.as_deref(),
                symbol: w.symbol.as_deref(),
                object: w.object.as_deref(),
                addresses: w.addresses.iter().map(|a| format!("{a:#x}")).collect(),
                tids: &w.tids,
            })
            .collect(),
        samples_total: s.samples_total,
        lost_samples: s.lost_samples,
        threads_missed: s.threads_missed,
        process_exited: s.process_exited,
        notes: &s.notes,
    }
}
