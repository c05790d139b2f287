//! `runs` for people: one row per run with its mode, then the verdict in
//! words ("slow mode (5 of 12 runs, median 48.1k) ⇔ started on node 1
//! (5/5), …") and the ranked attributes behind it.

use numasleuth_analyze::runs::attributes::RunAttribute;
use numasleuth_analyze::runs::bimodal::{ALPHA, RELATIVE_GAP_FLOOR};
use numasleuth_analyze::runs::explain::EXPLAINS;
use numasleuth_analyze::runs::{Analysis, Explanation, Label, RunRow, Verdict};

use crate::layout::TextLayout;
use crate::table::columns;

/// Everything a `runs` report shows.
pub struct RunsReport<'a> {
    /// The workload as typed.
    pub command: &'a [String],
    /// `wall_s`, or the `--metric` pattern.
    pub metric_name: &'a str,
    /// Whether the metric was read from the output (else wall time).
    pub from_output: bool,
    pub lower_is_better: bool,
    pub rows: &'a [RunRow],
    pub analysis: &'a Analysis,
    /// The main binary, as the placement sample named it.
    pub program: Option<&'a str>,
    /// What could not be observed, and why.
    pub missing: &'a [String],
}

/// `48.1k`, `100k`, `1.02`, `0.0123`: three significant digits.
pub fn metric(value: f64) -> String {
    if !value.is_finite() {
        return "?".into();
    }
    let (scaled, suffix) = match value.abs() {
        a if a >= 1e9 => (value / 1e9, "G"),
        a if a >= 1e6 => (value / 1e6, "M"),
        a if a >= 1e4 => (value / 1e3, "k"),
        _ => (value, ""),
    };
    let digits = match scaled.abs() {
        a if a >= 100.0 || a == 0.0 => 0,
        a if a >= 10.0 => 1,
        a if a >= 1.0 => 2,
        a => (2 - a.log10().floor() as i32).clamp(2, 9) as usize,
    };
    format!("{scaled:.digits$}{suffix}")
}

/// "started on node 1", ".bss of /usr/bin/app on node 1".
fn phrase(attribute: RunAttribute, values: &[String], program: Option<&str>) -> String {
    let program = program.unwrap_or("the program");
    let v = values.join(" or ");
    match attribute {
        RunAttribute::StartNode => format!("started on node {v}"),
        RunAttribute::StartCpu => format!("started on CPU {v}"),
        RunAttribute::BssNode => format!(".bss of {program} on node {v}"),
        RunAttribute::DataNode => format!(".data of {program} on node {v}"),
        RunAttribute::HeapNode => format!("heap on node {v}"),
        RunAttribute::ThreadNodes => format!("threads on node(s) {v}"),
        RunAttribute::ExitCode => format!("exit code {v}"),
    }
}

fn side(e: &Explanation, label: Label) -> (&[String], usize, usize) {
    match label {
        Label::Slow => (&e.slow_values, e.slow_matching, e.slow_total),
        _ => (&e.fast_values, e.fast_matching, e.fast_total),
    }
}

/// The verdict lines, shared with the JSON (`verdict`).
pub fn verdict(report: &RunsReport<'_>) -> Vec<String> {
    let analysis = report.analysis;
    let b = &analysis.bimodality;
    let mut reason = b.reason.clone();
    if let Some(first) = reason.get(..1) {
        reason.replace_range(..1, &first.to_uppercase());
    }
    if b.verdict == Verdict::OneMode {
        return vec![format!("{reason}.")];
    }
    let mut lines = vec![format!("{reason}.")];
    let explaining: Vec<&Explanation> = analysis.explaining().collect();
    for label in [Label::Slow, Label::Fast] {
        let Some(cluster) = analysis.cluster(label) else {
            continue;
        };
        let head = format!(
            "{} mode ({} of {} runs, median {})",
            label.as_str(),
            cluster.runs.len(),
            report.rows.len(),
            metric(cluster.median)
        );
        let causes: Vec<String> = explaining
            .iter()
            .filter(|e| !side(e, label).0.is_empty())
            .take(4)
            .map(|e| {
                let (values, matching, total) = side(e, label);
                format!("{} ({matching}/{total})", phrase(e.attribute, values, report.program))
            })
            .collect();
        if !causes.is_empty() {
            lines.push(format!("{head} ⇔ {}", causes.join(", ")));
        } else {
            lines.push(head);
        }
    }
    if explaining.is_empty() {
        lines.push(match analysis.explanations.iter().find(|e| !e.constant) {
            Some(best) => format!(
                "Nothing observed separates the modes: the best attribute, {}, reaches {:.2} ({EXPLAINS:.2} needed).",
                best.attribute, best.separation
            ),
            None => "Nothing observed separates the modes: every attribute was the same in every run.".into(),
        });
    }
    lines
}

/// Attribute columns of the run table: the placement sample's, where any
/// run has them (the start CPU and node have columns of their own).
fn attribute_columns(rows: &[RunRow]) -> Vec<RunAttribute> {
    RunAttribute::ALL
        .into_iter()
        .filter(|a| a.is_placement() && rows.iter().any(|r| r.attributes.contains_key(a)))
        .collect()
}

fn run_table(report: &RunsReport<'_>, layout: &TextLayout) -> String {
    let attributes = attribute_columns(report.rows);
    let counters = ["minor_faults", "major_faults", "context_switches", "cpu_migrations"];
    let mut header: Vec<String> = ["run", "cpu", "node", "metric", "mode", "exit", "wall_s"]
        .map(String::from)
        .into();
    header.extend(
        attributes
            .iter()
            .map(|a| a.as_str().trim_end_matches("_node").to_string()),
    );
    header.extend(["minflt", "majflt", "csw", "migr"].map(String::from));
    let mut rows = vec![header];
    for row in report.rows {
        let exit = match (row.exit_code, row.signal) {
            (Some(code), _) => code.to_string(),
            (None, Some(signal)) => format!("sig{signal}"),
            _ => "?".into(),
        };
        let mut cells = vec![
            row.number().to_string(),
            row.start_cpu.to_string(),
            row.start_node.map_or("?".into(), |n| n.to_string()),
            metric(row.metric),
            report
                .analysis
                .labels
                .get(row.index)
                .map_or("?", |l| l.as_str())
                .to_string(),
            exit,
            format!("{:.3}", row.wall_s),
        ];
        cells.extend(
            attributes
                .iter()
                .map(|a| row.attributes.get(a).cloned().unwrap_or_else(|| "-".into())),
        );
        cells.extend(
            counters
                .iter()
                .map(|c| row.counters.get(*c).map_or("?".into(), u64::to_string)),
        );
        rows.push(cells);
    }
    columns(&rows, layout)
}

/// The method in one line, shared with the JSON.
pub fn method() -> String {
    format!(
        "optimal two-cluster split of the log of a positive metric, gap between the cluster means against each \
         cluster's own standard deviation, beyond {a:.0}% of a simulated normal mode, means at least {f:.0}% apart; \
         two modes only when an observed attribute explains the split, or an attribute's two groups differ (Welch's \
         t, {a:.0}% over the attributes tested)",
        a = ALPHA * 100.0,
        f = RELATIVE_GAP_FLOOR * 100.0
    )
}

pub fn render(report: &RunsReport<'_>, layout: &TextLayout) -> String {
    let direction = if report.lower_is_better {
        "lower is better"
    } else {
        "higher is better"
    };
    let source = if report.from_output {
        format!("the value of the last output line matching `{}`", report.metric_name)
    } else {
        "wall time in seconds".into()
    };
    let mut out = format!(
        "{} runs of `{}`; metric: {source} ({direction})\n\n",
        report.rows.len(),
        report.command.join(" ")
    );
    out.push_str(&run_table(report, layout));
    out.push('\n');
    for line in verdict(report) {
        out.push_str(&line);
        out.push('\n');
    }
    if report.analysis.bimodality.verdict != Verdict::OneMode && !report.analysis.explanations.is_empty() {
        out.push('\n');
        let mut rows = vec![["attribute", "separation", "slow runs", "fast runs"]
            .map(String::from)
            .to_vec()];
        for e in &report.analysis.explanations {
            let show = |values: &[String], matching, total| match values.is_empty() {
                true => "-".to_string(),
                false => format!("{} ({matching}/{total})", values.join(",")),
            };
            rows.push(vec![
                e.attribute.to_string(),
                if e.constant {
                    "constant".into()
                } else {
                    format!("{:.2}", e.separation)
                },
                show(&e.slow_values, e.slow_matching, e.slow_total),
                show(&e.fast_values, e.fast_matching, e.fast_total),
            ]);
        }
        out.push_str(&columns(&rows, layout));
        out.push_str(&format!(
            "separation: balanced leave-one-out accuracy of predicting a run's mode from the other runs with its value; {EXPLAINS:.2} or more explains\n"
        ));
    }
    out.push_str(&format!("method: {} (docs/runs.md)\n", method()));
    for missing in report.missing {
        out.push_str(&format!("not observed: {missing}\n"));
    }
    run_notes(report.rows, &mut out);
    out
}

/// Run notes shown in text; the rest are counted, and all are in `--json`.
const RUN_NOTES_SHOWN: usize = 20;

/// Each run's notes (why its placement was not sampled, a release that
/// failed), so "see notes" points at something the text shows.
fn run_notes(rows: &[RunRow], out: &mut String) {
    let notes: Vec<String> = rows
        .iter()
        .flat_map(|r| r.notes.iter().map(move |note| format!("  run {}: {note}", r.number())))
        .collect();
    if notes.is_empty() {
        return;
    }
    out.push_str("notes:\n");
    for note in notes.iter().take(RUN_NOTES_SHOWN) {
        out.push_str(note);
        out.push('\n');
    }
    if notes.len() > RUN_NOTES_SHOWN {
        out.push_str(&format!("  … {} more in --json\n", notes.len() - RUN_NOTES_SHOWN));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn metrics_read_like_people_write_them() {
        assert_eq!(metric(48_100.0), "48.1k");
        assert_eq!(metric(100_000.0), "100k");
        assert_eq!(metric(1.0234), "1.02");
        assert_eq!(metric(0.012345), "0.0123");
        assert_eq!(metric(2_500_000.0), "2.50M");
        assert_eq!(metric(0.0), "0");
        assert_eq!(metric(-48_100.0), "-48.1k");
        assert_eq!(metric(f64::NAN), "?");
    }
}
