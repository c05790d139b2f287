//! `hotlines`' document, as `numasleuth.hotlines/1` writes it (report
//! puts the schema over it): what was sampled and how, what could not be
//! placed, the ranked lines, and the watchpoint to run next. Text renders
//! the same value.

use std::collections::BTreeMap;

use numasleuth_model::perf::sample::SampleRaw;
use serde::Serialize;

use super::{confirm_command, NamedLine, Tally};

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct HotlinesDocument {
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

impl HotlinesDocument {
    pub fn new(
        pid: u32,
        method: &str,
        raw: &SampleRaw,
        tally: &Tally,
        lines: &[NamedLine],
        precise: &[String],
        notes: &[String],
    ) -> HotlinesDocument {
        HotlinesDocument {
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
}
