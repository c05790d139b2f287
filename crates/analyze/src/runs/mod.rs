//! `runs`: is a benchmark's metric bimodal across runs, and which observed
//! attribute of a run (start node, where .bss landed, …) explains the modes.
//!
//! Pure: the collector (`numasleuth-measure`) hands over one metric and a
//! map of categorical attributes per run; this derives each run's row
//! (`row`), decides the clusters and ranks the attributes.

pub mod attributes;
pub mod bimodal;
pub mod explain;
pub mod metric;
pub mod row;
pub mod verdict;
pub mod welch;

use std::collections::BTreeMap;

use serde::Serialize;

pub use bimodal::Bimodality;
pub use explain::Explanation;
pub use verdict::Verdict;

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
    pub attributes: attributes::Attributes,
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

/// Clusters the runs' metrics, ranks `attributes` by how well they
/// separate the clusters, and gives the verdict ([`verdict`]): two modes
/// need an attribute that explains them. With `lower_is_better` (wall
/// time) the high cluster is the slow one.
pub fn analyze(metrics: &[f64], attributes: &[attributes::Attributes], lower_is_better: bool) -> Analysis {
    let critical = bimodal::critical_separation(metrics.len());
    analyze_with(metrics, attributes, lower_is_better, critical)
}

/// [`analyze`] against a given critical separation (simulations reuse one
/// per `n` instead of simulating the null for every series).
pub fn analyze_with(
    metrics: &[f64],
    attributes: &[attributes::Attributes],
    lower_is_better: bool,
    critical: f64,
) -> Analysis {
    let mut bimodality = bimodal::judge_with(metrics, critical);
    let one_mode = |bimodality| Analysis {
        bimodality,
        clusters: vec![cluster(Label::All, (0..metrics.len()).collect(), metrics)],
        labels: vec![Label::All; metrics.len()],
        explanations: Vec::new(),
    };
    let finite = metrics.iter().all(|v| v.is_finite()) && metrics.len() >= bimodal::MIN_RUNS;
    if let Some(split) = bimodality.split.clone().filter(|_| bimodality.split_significant) {
        let is_slow = slow_flags(&split, metrics.len(), lower_is_better);
        let analysis = labelled(bimodality, metrics, attributes, &is_slow);
        return explained_or_possible(analysis);
    }
    let road_two = if finite {
        verdict::attribute_split(metrics, attributes, lower_is_better)
    } else {
        None
    };
    let Some((test, is_slow)) = road_two else {
        return one_mode(bimodality);
    };
    let separation = bimodality.split.as_ref().map(|s| s.separation);
    bimodality.reason = verdict::attribute_reason(&test, separation, bimodality.critical_separation);
    bimodality.bimodal = true;
    bimodality.verdict = Verdict::TwoModes;
    bimodality.attribute_test = Some(test);
    labelled(bimodality, metrics, attributes, &is_slow)
}

/// Which runs are slow by the metric's own split.
fn slow_flags(split: &bimodal::Split, n: usize, lower_is_better: bool) -> Vec<bool> {
    let slow = if lower_is_better { &split.high } else { &split.low };
    let mut is_slow = vec![false; n];
    slow.iter().for_each(|i| is_slow[*i] = true);
    is_slow
}

/// Slow and fast clusters and the attributes ranked against them.
fn labelled(
    bimodality: Bimodality,
    metrics: &[f64],
    attributes: &[attributes::Attributes],
    is_slow: &[bool],
) -> Analysis {
    let labels: Vec<Label> = is_slow
        .iter()
        .map(|s| if *s { Label::Slow } else { Label::Fast })
        .collect();
    let pick = |want: bool| {
        (0..metrics.len())
            .filter(|i| is_slow[*i] == want)
            .collect::<Vec<usize>>()
    };
    Analysis {
        clusters: vec![
            cluster(Label::Slow, pick(true), metrics),
            cluster(Label::Fast, pick(false), metrics),
        ],
        explanations: explain::explain(attributes, is_slow),
        bimodality,
        labels,
    }
}

/// A split the metric makes on its own is two modes only when an observed
/// attribute explains it; otherwise a possible second mode.
fn explained_or_possible(mut analysis: Analysis) -> Analysis {
    if analysis.explaining().next().is_some() {
        let b = &mut analysis.bimodality;
        b.reason = b.reason.replacen("two clusters", "two modes", 1);
        return analysis;
    }
    let b = &mut analysis.bimodality;
    b.bimodal = false;
    b.verdict = Verdict::PossibleSecondMode;
    b.reason = format!(
        "a possible second mode, explained by nothing here: rerun with more runs ({})",
        b.reason.replacen("two clusters: ", "", 1)
    );
    analysis
}

#[cfg(test)]
mod bimodal_tests;
#[cfg(test)]
mod explain_tests;
#[cfg(test)]
mod verdict_tests;
