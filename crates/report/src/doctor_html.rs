//! `doctor --html FILE`: one self-contained page with the topology, the
//! distance heatmap, the findings and what could not be checked.

use numasleuth_analyze::evidence::{Evidence, Value};
use numasleuth_analyze::findings::{Diagnosis, Finding, Severity};
use numasleuth_model::Topology;

use crate::format::optional_bytes;
use crate::html::{escape, heatmap_svg, table};
use crate::provenance::Provenance;

const STYLE: &str = "body{font-family:system-ui,sans-serif;margin:2em;max-width:70em;color:#222}\
h1{font-size:1.5em}h2{font-size:1.2em;margin-top:1.6em;border-bottom:1px solid #ccc}\
table{border-collapse:collapse;margin:.5em 0}td,th{border:1px solid #ccc;padding:.25em .6em;text-align:left}\
th{background:#f3f3f3}.finding{border-left:.4em solid;padding:.4em .9em;margin:.8em 0;background:#fafafa}\
.critical{border-color:#c0392b}.warning{border-color:#e0a100}.info{border-color:#2980b9}\
.sev{font-weight:bold;text-transform:uppercase;margin-right:.6em}.id{color:#666;font-family:monospace}\
ul{margin:.3em 0}.muted{color:#666}";

/// The evidence's source and numbers, shown on hover:
/// `/proc/zoneinfo: free_pages=174188, low_pages=163915`.
fn evidence_tooltip(item: &Evidence) -> String {
    let values: Vec<String> = item
        .values
        .iter()
        .map(|(name, value)| {
            let shown = match value {
                Value::Int(v) => v.to_string(),
                Value::Float(v) => format!("{v:.4}"),
                Value::List(v) => list_value(name, v),
            };
            format!("{name}={shown}")
        })
        .collect();
    if values.is_empty() {
        item.source.clone()
    } else {
        format!("{}: {}", item.source, values.join(", "))
    }
}

/// A list of ids (a name ending in `cpus` or `nodes`, as value names say
/// what they hold) is written as every list a person reads; a list of
/// counts keeps every count.
fn list_value(name: &str, values: &[i64]) -> String {
    let ids: Option<Vec<u32>> = values.iter().map(|v| u32::try_from(*v).ok()).collect();
    match ids {
        Some(ids) if name.ends_with("cpus") || name.ends_with("nodes") => numasleuth_parse::human_list(&ids),
        _ => values.iter().map(i64::to_string).collect::<Vec<_>>().join(","),
    }
}

/// A measured section (a heatmap, a chart) to append after the topology.
pub struct Section {
    pub title: String,
    pub html: String,
}

pub fn render(
    provenance: &Provenance,
    headline: &str,
    topo: &Topology,
    diagnosis: &Diagnosis,
    sections: &[Section],
) -> String {
    let mut body = format!(
        "<h1>numasleuth doctor</h1><p>{}</p>",
        escape(headline).replace('\n', "<br>")
    );
    body.push_str(&provenance_table(provenance));
    body.push_str(&summary(diagnosis));
    body.push_str("<h2>Findings</h2>");
    if diagnosis.findings.is_empty() {
        body.push_str(&format!(
            "<p>{}</p>",
            escape(&crate::doctor_text::empty_verdict(diagnosis))
        ));
    }
    for finding in &diagnosis.findings {
        body.push_str(&finding_html(finding));
    }
    body.push_str("<h2>Topology</h2>");
    body.push_str(&nodes_table(topo));
    body.push_str(&distance_heatmap(topo));
    body.push_str(&devices_html(topo));
    for section in sections {
        body.push_str(&format!("<h2>{}</h2>{}", escape(&section.title), section.html));
    }
    body.push_str(&checks_html(diagnosis));
    format!(
        "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>numasleuth doctor</title>\
         <style>{STYLE}</style></head><body>{body}</body></html>\n"
    )
}

/// One finding: its severity, title, evidence (values on hover) and remedy.
fn finding_html(finding: &Finding) -> String {
    let mut html = String::new();
    let class = finding.severity.as_str();
    html.push_str(&format!(
        "<div class=\"finding {class}\"><span class=\"sev\">{class}</span><strong>{}</strong> \
         <span class=\"id\">[{}]</span><ul>",
        escape(&finding.title),
        escape(finding.id)
    ));
    for item in &finding.evidence {
        html.push_str(&format!(
            "<li title=\"{}\">{}</li>",
            escape(&evidence_tooltip(item)),
            code_spans(&escape(&item.text))
        ));
    }
    html.push_str(&format!(
        "</ul><p><strong>Remedy:</strong> {}</p>",
        code_spans(&escape(&finding.remedy))
    ));
    if let Some(incident) = finding.incident {
        html.push_str(&format!("<p class=\"muted\">Guards against: {}</p>", escape(incident)));
    }
    html.push_str("</div>");
    html
}

/// The devices table; nothing when there are none.
fn devices_html(topo: &Topology) -> String {
    let mut html = String::new();
    if !topo.devices.is_empty() {
        let rows: Vec<Vec<String>> = topo
            .devices
            .iter()
            .map(|d| {
                vec![
                    d.kind.to_string(),
                    d.name.clone(),
                    d.pci.clone(),
                    d.node.map_or("-".into(), |n| n.to_string()),
                    d.local_cpus.as_ref().map_or("?".into(), |c| c.to_string()),
                ]
            })
            .collect();
        html.push_str("<h3>Devices</h3>");
        html.push_str(&table(&["kind", "name", "PCI", "node", "local CPUs"], &rows));
    }
    html
}

/// Which checks ran, which were skipped and why, and which ran on part of
/// their inputs.
fn checks_html(diagnosis: &Diagnosis) -> String {
    let mut html = String::new();
    html.push_str("<h2>Checks</h2>");
    html.push_str(&format!(
        "<p>Ran: {}</p>",
        escape(&crate::doctor_text::joined(&diagnosis.checks_run))
    ));
    if !diagnosis.checks_skipped.is_empty() {
        let rows: Vec<Vec<String>> = diagnosis
            .checks_skipped
            .iter()
            .map(|s| {
                let why = if s.unreadable {
                    format!("{} (unreadable)", s.why)
                } else {
                    s.why.clone()
                };
                vec![s.id.to_string(), why]
            })
            .collect();
        html.push_str(&table(&["skipped check", "why"], &rows));
    }
    if !diagnosis.checks_partial.is_empty() {
        html.push_str(&format!(
            "<p>{} check(s) could not read all their inputs; they ran on the rest, so no finding from them is \
             not a clean bill:</p>",
            diagnosis.checks_partial.len()
        ));
        let rows: Vec<Vec<String>> = diagnosis
            .checks_partial
            .iter()
            .flat_map(|p| {
                p.unread
                    .iter()
                    .map(|u| vec![p.id.to_string(), u.path.clone(), u.why.clone()])
            })
            .collect();
        html.push_str(&table(&["partial check", "could not read", "why"], &rows));
    }
    html
}

fn summary(diagnosis: &Diagnosis) -> String {
    let count = |s: Severity| diagnosis.findings.iter().filter(|f| f.severity == s).count();
    format!(
        "<p>{} critical, {} warning, {} info; {} checks run ({} partial), {} skipped.</p>",
        count(Severity::Critical),
        count(Severity::Warning),
        count(Severity::Info),
        diagnosis.checks_run.len(),
        diagnosis.checks_partial.len(),
        diagnosis.checks_skipped.len()
    )
}

fn nodes_table(topo: &Topology) -> String {
    let rows: Vec<Vec<String>> = topo
        .nodes
        .iter()
        .map(|n| {
            vec![
                n.id.to_string(),
                if n.has_cpus() {
                    n.cpus.to_string()
                } else {
                    "none (memory only)".into()
                },
                optional_bytes(n.memory_total_bytes),
                optional_bytes(n.memory_free_bytes),
            ]
        })
        .collect();
    table(&["node", "CPUs", "memory", "free"], &rows)
}

fn distance_heatmap(topo: &Topology) -> String {
    let labels: Vec<String> = topo.nodes.iter().map(|n| format!("node {}", n.id)).collect();
    let matrix: Vec<Vec<Option<f64>>> = topo
        .nodes
        .iter()
        .map(|n| n.distances.iter().map(|d| d.map(f64::from)).collect())
        .collect();
    heatmap_svg(
        "SLIT distances (firmware, not measured)",
        &labels,
        &matrix,
        "relative distance, 10 = local",
    )
}

/// `text` (already escaped) with each `quoted` span as `<code>`, as the
/// remedies write commands; an unpaired backtick stays as it is.
fn code_spans(text: &str) -> String {
    let parts: Vec<&str> = text.split('`').collect();
    if parts.len().is_multiple_of(2) {
        return text.to_string();
    }
    parts
        .iter()
        .enumerate()
        .map(|(i, part)| {
            if i % 2 == 1 {
                format!("<code>{part}</code>")
            } else {
                part.to_string()
            }
        })
        .collect()
}

fn provenance_table(p: &Provenance) -> String {
    let unknown = || "unknown".to_string();
    let source = match &p.snapshot {
        Some(s) => format!(
            "snapshot {} taken {}",
            s.path,
            s.created_utc.as_deref().unwrap_or("at an unknown time")
        ),
        None => "live system".to_string(),
    };
    let rows = vec![
        vec!["host".to_string(), p.hostname.clone().unwrap_or_else(unknown)],
        vec!["kernel".to_string(), p.kernel_release.clone().unwrap_or_else(unknown)],
        vec!["generated".to_string(), p.generated_utc.clone()],
        vec!["numasleuth".to_string(), p.numasleuth_version.clone()],
        vec!["source".to_string(), source],
    ];
    let mut rows = rows;
    if let Some(line) = p.run.as_ref().and_then(crate::provenance::run_line) {
        rows.push(vec!["run".to_string(), line]);
    }
    format!("<div class=\"muted\">{}</div>", table(&["report", ""], &rows))
}

#[cfg(test)]
mod code_span_tests {
    use super::code_spans;

    #[test]
    fn backticks_become_code_only_in_pairs() {
        assert_eq!(code_spans("run `irq --fix` now"), "run <code>irq --fix</code> now");
        assert_eq!(code_spans("a ` alone"), "a ` alone");
        assert_eq!(code_spans("`a` and `b`"), "<code>a</code> and <code>b</code>");
    }
}
