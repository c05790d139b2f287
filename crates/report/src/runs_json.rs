//! `runs --json`: schema `numasleuth.runs/1`. The names in the issue
//! (`schema`, `metric{name, lower_is_better}`, `runs[]{index, start_cpu,
//! start_node, metric, exit_code, wall_s, attributes}`, `bimodal`,
//! `clusters[]{label, runs, median}`, `explanations[]{attribute,
//! separation, slow, fast}`) keep their meaning; others may be added.
//! `bimodal` is true only for two modes; `mode_verdict` is `one-mode`,
//! `two-modes` or `possible-second-mode` (a split nothing observed
//! explains, with `possible_second_mode` true), and
//! `bimodality.attribute_test` holds the Welch test when an attribute's
//! two groups made the verdict.

use numasleuth_analyze::runs::bimodal::{ALPHA, MIN_CLUSTER_FRACTION, MIN_CLUSTER_RUNS, RELATIVE_GAP_FLOOR};
use numasleuth_analyze::runs::explain::{Explanation, EXPLAINS};
use numasleuth_analyze::runs::{Analysis, Cluster, RunRow, Verdict, SCHEMA};
use serde_json::{json, Value};

use crate::runs_text::{method, verdict, RunsReport};

/// A number JSON can hold (`null` for NaN or infinity).
fn finite(value: f64) -> Value {
    if value.is_finite() {
        json!(value)
    } else {
        Value::Null
    }
}

pub fn build(report: &RunsReport<'_>) -> Value {
    let analysis = report.analysis;
    let b = &analysis.bimodality;
    let runs: Vec<Value> = report.rows.iter().map(|row| run_json(row, analysis)).collect();
    let clusters: Vec<Value> = analysis.clusters.iter().map(cluster_json).collect();
    let explanations: Vec<Value> = analysis.explanations.iter().map(explanation_json).collect();
    let split = b.split.as_ref();
    json!({
        "schema": SCHEMA,
        "command": report.command,
        "program": report.program,
        "metric": {
            "name": report.metric_name,
            "source": if report.from_output { "output" } else { "wall_time" },
            "lower_is_better": report.lower_is_better,
        },
        "runs": runs,
        "bimodal": b.bimodal,
        "mode_verdict": b.verdict.as_str(),
        "possible_second_mode": b.verdict == Verdict::PossibleSecondMode,
        "bimodality": {
            "method": method(),
            "split_significant": b.split_significant,
            "log_scale": split.map(|s| s.log_scale),
            "separation": split.map(|s| finite(s.separation)),
            "critical_separation": finite(b.critical_separation),
            "relative_gap": split.map(|s| finite(s.relative_gap)),
            "alpha": ALPHA,
            "relative_gap_floor": RELATIVE_GAP_FLOOR,
            "min_cluster_runs": MIN_CLUSTER_RUNS,
            "min_cluster_fraction": MIN_CLUSTER_FRACTION,
            "reason": b.reason,
            "attribute_test": b.attribute_test.as_ref().map(|t| json!({
                "attribute": t.attribute,
                "slow_value": t.slow_value,
                "fast_value": t.fast_value,
                "welch_t": finite(t.t),
                "degrees_of_freedom": finite(t.df),
                "p": t.p,
                "attributes_tested": t.tested,
                "relative_gap": finite(t.relative_gap),
            })),
        },
        "clusters": clusters,
        "explanations": explanations,
        "explains_threshold": EXPLAINS,
        "verdict": verdict(report),
        "not_observed": report.missing,
    })
}

fn run_json(row: &RunRow, analysis: &Analysis) -> Value {
    json!({
        "index": row.index,
        "run": row.number(),
        "start_cpu": row.start_cpu,
        "start_node": row.start_node,
        "metric": finite(row.metric),
        "exit_code": row.exit_code,
        "signal": row.signal,
        "wall_s": row.wall_s,
        "cluster": analysis.labels.get(row.index).map(|l| l.as_str()),
        "attributes": row.attributes,
        "counters": row.counters,
        "placement_sampled": row.placement_sampled,
        "notes": row.notes,
    })
}

fn cluster_json(c: &Cluster) -> Value {
    json!({
        "label": c.label.as_str(),
        "runs": c.runs,
        "median": finite(c.median),
        "min": finite(c.min),
        "max": finite(c.max),
    })
}

fn explanation_json(e: &Explanation) -> Value {
    json!({
        "attribute": e.attribute,
        "separation": e.separation,
        "slow": e.slow_values.join(","),
        "fast": e.fast_values.join(","),
        "explains": e.explains(),
        "constant": e.constant,
        "slow_matching": e.slow_matching,
        "slow_total": e.slow_total,
        "fast_matching": e.fast_matching,
        "fast_total": e.fast_total,
        "unknown": e.unknown,
    })
}
