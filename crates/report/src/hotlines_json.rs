//! `hotlines --json`, schema `numasleuth.hotlines/1`.
//!
//! Kept names: `method` (`ip-decode`, `precise:cpu/mem-loads`,
//! `precise:ibs_op`), `samples`, `unknown_share`,
//! `lines[]` with `address` (hex string), `symbols`, `samples`, `writes`,
//! `reads`, `threads`, `nodes`. Every line is a whole record. Fields may be
//! added, never renamed.

use std::collections::BTreeMap;

use numasleuth_analyze::hotlines::{confirm_command, LineSymbolUse, Tally};
use numasleuth_model::perf::sample::SampleRaw;
use serde::Serialize;

pub const SCHEMA: &str = "numasleuth.hotlines/1";

pub use numasleuth_analyze::hotlines::NamedLine;

#[derive(Debug, Serialize)]
pub struct HotlinesJson {
    pub schema: &'static str,
    pub pid: u32,
    pub method: String,
    pub duration_s: f64,
    pub samples: u64,
    pub no_memory_samples: u64,
    pub unknown_share: f64,
    pub unknown: BTreeMap<String, u64>,
    pub threads_sampled: usize,
    pub process_exited: bool,
    pub precise_available: Vec<String>,
    pub lines: Vec<LineJson>,
    pub next_step: Option<String>,
    pub notes: Vec<String>,
}

#[derive(Debug, Serialize)]
pub struct LineJson {
    pub address: String,
    pub symbols: Vec<String>,
    pub region: String,
    pub samples: u64,
    pub writes: u64,
    pub reads: u64,
    pub read_modify_writes: u64,
    pub threads: Vec<u32>,
    pub writer_threads: Vec<u32>,
    pub cpus: Vec<u32>,
    pub nodes: Vec<u32>,
    pub contended: bool,
    pub reasons: Vec<String>,
    pub false_sharing: bool,
    pub symbol_use: Vec<LineSymbolUse>,
}

fn line_json(n: &NamedLine) -> LineJson {
    let l = &n.line;
    LineJson {
        address: format!("{:#x}", l.address),
        symbols: n.symbols.clone(),
        region: n.region.clone(),
        samples: l.samples,
        writes: l.writes,
        reads: l.reads,
        read_modify_writes: l.read_modify_writes,
        threads: l.threads.clone(),
        writer_threads: l.writer_threads.clone(),
        cpus: l.cpus.clone(),
        nodes: l.nodes.clone(),
        contended: l.contended,
        reasons: l.reasons.clone(),
        false_sharing: n.false_sharing,
        symbol_use: n.symbol_use.clone(),
    }
}

/// What to run next: a watchpoint on the top contended line's symbol.
fn next_step(pid: u32, lines: &[NamedLine]) -> Option<String> {
    let top = lines.iter().find(|l| l.line.contended)?;
    Some(format!("confirm with `{}`", confirm_command(pid, top)))
}

pub fn build(
    pid: u32,
    method: &str,
    raw: &SampleRaw,
    tally: &Tally,
    lines: &[NamedLine],
    precise: &[String],
    notes: &[String],
) -> HotlinesJson {
    HotlinesJson {
        schema: SCHEMA,
        pid,
        method: method.to_string(),
        duration_s: raw.duration_s,
        samples: tally.samples,
        no_memory_samples: tally.no_memory,
        unknown_share: tally.unknown_share(),
        unknown: tally.unknown.clone(),
        threads_sampled: raw.threads.len(),
        process_exited: raw.process_exited,
        precise_available: precise.to_vec(),
        lines: lines.iter().map(line_json).collect(),
        next_step: next_step(pid, lines),
        notes: notes.to_vec(),
    }
}
