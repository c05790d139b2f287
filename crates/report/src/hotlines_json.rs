//! `hotlines --json`, schema `numasleuth.hotlines/1`.
//!
//! Kept names: `method` (`ip-decode`, `precise:cpu/mem-loads`,
//! `precise:ibs_op`), `samples`, `unknown_share`,
//! `lines[]` with `address` (hex string), `symbols`, `samples`, `writes`,
//! `reads`, `threads`, `nodes`. Every line is a whole record. Fields may be
//! added, never renamed.

use std::collections::BTreeMap;

use numasleuth_analyze::hotlines::{confirm_command, Tally};
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
    /// Each line serializes as analyze writes it (`NamedLine`).
    pub lines: Vec<NamedLine>,
    pub next_step: Option<String>,
    pub notes: Vec<String>,
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
        lines: lines.to_vec(),
        next_step: next_step(pid, lines),
        notes: notes.to_vec(),
    }
}
