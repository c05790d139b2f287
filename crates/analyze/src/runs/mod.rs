//! `runs`: is a benchmark's metric bimodal across runs, and which observed
//! attribute of a run (start node, where .bss landed, …) explains the modes.
//!
//! Pure: the collector (`numasleuth-measure`) hands over one metric and a
//! map of categorical attributes per run; this decides the clusters and
//! ranks the attributes.

pub mod attributes;
pub mod bimodal;
pub mod explain;
pub mod metric;

use std::collections::BTreeMap;

use serde::Serialize;

pub use bimodal::Bimodality;
pub use explain::Explanation;

/// The schema `runs --json` prints.
pub const SCHEMA: &str = "numasleuth.runs/1";

/// One run as the report shows it: what was observed, in units.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RunRow {
    /// Position among the runs, from 0: the index into the analysis'
    /// labels. People see [`RunRow::number`].
    pub index: usize,
    pub start_cpu: u32,
    pub start_node: Option<u32>,
    pub metric: f64,
    pub exit_code: Option<i32>,
    /// The signal that ended it, if one did.
    pub signal: Option<i32>,
    pub wall_s: f64,
    /// Categorical observations compared across runs (`start_node`,
    /// `bss_node`, …).
    pub attributes: BTreeMap<String, String>,
    /// Software counters (`minor_faults`, `cpu_migrations`, …); a counter
    /// that could not be read is absent, never 0.
    pub counters: BTreeMap<String, u64>,
    /// Whether placement was sampled at the settle time (the workload was
    /// still running).
    pub placement_sampled: bool,
    pub notes: Vec<String>,
}

impl RunRow {
    /// The run's number as people see it, from 1: the progress line
    /// ("run 2/6"), the table, the chart and every message use it.
    pub fn number(&self) -> usize {
        self.index + 1
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Label {
    Slow,
    Fast,
    /// One mode: every run.
    All,
}

impl Label {
    pub fn as_str(self) -> &'static str {
        match self {
            Label::Slow => "slow",
            Label::Fast => "fast",
            Label::All => "all",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Cluster {
    pub label: Label,
    /// Run indices, ascending.
    pub runs: Vec<usize>,
    pub median: f64,
    pub min: f64,
    pub max: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Analysis {
    pub bimodality: Bimodality,
    /// Slow first, then fast; one `all` cluster when there is one mode.
    pub clusters: Vec<Cluster>,
    /// The cluster of each run.
    pub labels: Vec<Label>,
    /// Ranked, best first; empty with one mode.
    pub explanations: Vec<Explanation>,
}

impl Analysis {
    /// The attributes that explain the modes (separation ≥ the threshold).
    pub fn explaining(&self) -> impl Iterator<Item = &Explanation> {
        self.explanations.iter().filter(|e| e.explains())
    }

    pub fn cluster(&self, label: Label) -> Option<&Cluster> {
        self.clusters.iter().find(|c| c.label == label)
    }
}

fn cluster(label: Label, runs: Vec<usize>, metrics: &[f64]) -> Cluster {
    let values: Vec<f64> = runs.iter().map(|i| metrics[*i]).collect();
    let summary = crate::stats::summarize(&values);
    let (min, max) = values.iter().fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| {
        (lo.min(*v), hi.max(*v))
    });
    Cluster {
        label,
        runs,
        median: summary.map_or(f64::NAN, |s| s.median),
        min,
        max,
    }
}

/// Clusters the runs' metrics and, when there are two modes, ranks
/// `attributes` by how well they separate them. With `lower_is_better`
/// (wall time) the high cluster is the slow one.
pub fn analyze(metrics: &[f64], attributes: &[BTreeMap<String, String>], lower_is_better: bool) -> Analysis {
    let bimodality = bimodal::judge(metrics);
    let split = bimodality.split.as_ref().filter(|_| bimodality.bimodal);
    let Some(split) = split else {
        return Analysis {
            bimodality,
            clusters: vec![cluster(Label::All, (0..metrics.len()).collect(), metrics)],
            labels: vec![Label::All; metrics.len()],
            explanations: Vec::new(),
        };
    };
    let (mut slow, mut fast) = if lower_is_better {
        (split.high.clone(), split.low.clone())
    } else {
        (split.low.clone(), split.high.clone())
    };
    slow.sort_unstable();
    fast.sort_unstable();
    let mut labels = vec![Label::Fast; metrics.len()];
    slow.iter().for_each(|i| labels[*i] = Label::Slow);
    let is_slow: Vec<bool> = labels.iter().map(|l| *l == Label::Slow).collect();
    let explanations = explain::explain(attributes, &is_slow);
    Analysis {
        clusters: vec![cluster(Label::Slow, slow, metrics), cluster(Label::Fast, fast, metrics)],
        bimodality,
        labels,
        explanations,
    }
}

#[cfg(test)]
mod bimodal_tests;
#[cfg(test)]
mod explain_tests;
