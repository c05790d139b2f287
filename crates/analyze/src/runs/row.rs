//! One run's row, derived from what the collector recorded: the metric
//! (wall time, or the number on the workload's last matching line), the
//! software counters, the attributes compared across runs and the notes
//! saying what is missing. Pure, so the derivation is tested without
//! starting a process.

use std::collections::BTreeMap;

use numasleuth_model::runs::Exit;

use super::attributes::{Attributes, Placement, RunAttribute};
use super::metric::MetricPattern;
use super::RunRow;

/// What one run left behind, in the collector's units. `measure` records
/// it (`RunRecord`); the CLI hands over the parts a row needs.
#[derive(Debug, Clone, PartialEq)]
pub struct RawRun {
    /// Position among the runs, from 0.
    pub index: usize,
    pub start_cpu: u32,
    /// The node of the start CPU, when known.
    pub start_node: Option<u32>,
    pub wall_ns: u64,
    pub exit: Exit,
    /// CPU migrations over the whole run, or why perf could not count them.
    // String: the collector's error text, only ever shown in a note.
    pub cpu_migrations: Result<u64, String>,
    /// The placement sampled at the settle time, why it could not be, or
    /// `None` when the run exited before the settle time.
    // String: the sampler's error text, only ever shown in a note.
    pub placement: Option<Result<Placement, String>>,
    /// Threads whose affinity could not be widened (`--release-after`).
    pub release_failures: Vec<String>,
    /// Why reading the run's output stopped early, if it did.
    pub output_note: Option<String>,
}

/// Why a run's output gave no metric.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MetricMissing {
    /// No line matched the pattern.
    NoMatch,
    /// The last matching line (1-based number) holds no number.
    NoNumber { line_number: u64, line: String },
}

/// The run's metric: its wall time in seconds without a pattern, else the
/// number on the last line the pattern matched.
pub fn metric(
    pattern: Option<&MetricPattern>,
    wall_ns: u64,
    last_match: Option<&(u64, String)>,
) -> Result<f64, MetricMissing> {
    let Some(pattern) = pattern else {
        return Ok(seconds(wall_ns));
    };
    let (line_number, line) = last_match.ok_or(MetricMissing::NoMatch)?;
    pattern.value(line).ok_or_else(|| MetricMissing::NoNumber {
        line_number: *line_number,
        line: line.clone(),
    })
}

fn seconds(ns: u64) -> f64 {
    ns as f64 / 1e9
}

/// The row the report shows and the analysis compares. Counters that could
/// not be read are left out, never 0; a run without a placement sample
/// says why in its notes.
pub fn run_row(raw: RawRun, metric: f64) -> RunRow {
    let usage = raw.exit.usage;
    let mut counters: BTreeMap<String, u64> = [
        ("minor_faults", usage.minor_faults),
        ("major_faults", usage.major_faults),
        ("voluntary_switches", usage.voluntary_switches),
        ("involuntary_switches", usage.involuntary_switches),
        (
            "context_switches",
            usage.voluntary_switches.saturating_add(usage.involuntary_switches),
        ),
        ("user_us", usage.user_us),
        ("system_us", usage.system_us),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect();
    if let Ok(m) = raw.cpu_migrations {
        counters.insert("cpu_migrations".into(), m);
    }
    let mut attributes = Attributes::from([(RunAttribute::StartCpu, raw.start_cpu.to_string())]);
    if let Some(node) = raw.start_node {
        attributes.insert(RunAttribute::StartNode, node.to_string());
    }
    if let Some(code) = raw.exit.code {
        attributes.insert(RunAttribute::ExitCode, code.to_string());
    }
    let mut notes = Vec::new();
    let placement_sampled = match raw.placement {
        Some(Ok(p)) => {
            attributes.extend(p.attributes);
            if let Some(m) = p.cpu_migrations {
                counters.insert("cpu_migrations_at_settle".into(), m);
            }
            notes.extend(p.notes);
            true
        }
        Some(Err(why)) => {
            notes.push(why);
            false
        }
        None => {
            notes.push("exited before the settle time: placement not sampled".into());
            false
        }
    };
    notes.extend(raw.release_failures.iter().map(|f| format!("release: {f}")));
    notes.extend(raw.output_note);
    RunRow {
        index: raw.index,
        start_cpu: raw.start_cpu,
        start_node: raw.start_node,
        metric,
        exit_code: raw.exit.code,
        signal: raw.exit.signal,
        wall_s: seconds(raw.wall_ns),
        attributes,
        counters,
        placement_sampled,
        notes,
    }
}

/// The start CPUs in the order runs take them, for `--start-cpus spread`:
/// the allowed CPUs dealt out node by node (node 0's first, node 1's
/// first, node 0's second, …) so consecutive runs start on different
/// nodes. CPUs of no known node form a group of their own.
pub fn spread(allowed: &[u32], node_of: impl Fn(u32) -> Option<u32>) -> Vec<u32> {
    let mut by_node: BTreeMap<Option<u32>, Vec<u32>> = BTreeMap::new();
    for cpu in allowed {
        by_node.entry(node_of(*cpu)).or_default().push(*cpu);
    }
    let deepest = by_node.values().map(Vec::len).max().unwrap_or(0);
    (0..deepest)
        .flat_map(|i| by_node.values().filter_map(move |cpus| cpus.get(i).copied()))
        .collect()
}

#[cfg(test)]
#[path = "row_tests.rs"]
mod tests;
