//! `hotpages` as text: how DAMON watched, the ranked regions as a table,
//! then the findings and notes.

use std::fmt::Write;

use crate::format::bytes;
use crate::hotpages_json::HotpagesJson;
use crate::layout::TextLayout;
use crate::table::{table, Col};

fn nodes(r: &crate::hotpages_json::RegionJson) -> String {
    if r.nodes.is_empty() {
        return "-".into();
    }
    r.nodes
        .iter()
        .map(|(node, b)| format!("N{node}={}", bytes(*b)))
        .collect::<Vec<_>>()
        .join(" ")
}

pub fn render(doc: &HotpagesJson, layout: &TextLayout) -> String {
    let mut out = String::new();
    let d = &doc.damon;
    let comm = doc.comm.as_deref().map(|c| format!(" ({c})")).unwrap_or_default();
    let threads = doc
        .thread_nodes
        .iter()
        .map(u32::to_string)
        .collect::<Vec<_>>()
        .join(",");
    let _ = writeln!(
        out,
        "hotpages of process {}{comm}: DAMON vaddr for {:.1} s, {} snapshot(s); threads on node(s) {}",
        doc.pid,
        doc.duration_s,
        d.snapshots,
        if threads.is_empty() { "unknown".into() } else { threads }
    );
    let cost = match (d.kdamond_cpu_s, d.kdamond_cpu_percent) {
        (Some(s), Some(p)) => format!("; its kdamond used {s:.2} s of CPU ({p:.2}% of one CPU)"),
        _ => String::new(),
    };
    let _ = writeln!(
        out,
        "sampling every {} us, aggregating every {} us (at most {} accesses per aggregation), {}-{} regions{cost}",
        d.attrs.sample_us, d.attrs.aggr_us, d.max_nr_accesses, d.attrs.min_regions, d.attrs.max_regions
    );
    if let Some(why) = &doc.ended_early {
        let _ = writeln!(out, "monitoring ended early: {why}");
    }
    let _ = writeln!(
        out,
        "{} region(s) at the end, {} hot (accessed in at least 10% of samples)\n",
        doc.regions_total, doc.regions_hot
    );
    out.push_str(&regions(doc, layout));
    out.push('\n');
    out.push_str(&findings(doc));
    for note in &doc.notes {
        let _ = writeln!(out, "note: {note}");
    }
    out
}

/// The ranked regions as a table, or why there are none.
fn regions(doc: &HotpagesJson, layout: &TextLayout) -> String {
    let mut out = String::new();
    if doc.regions.is_empty() {
        let _ = writeln!(out, "no hot region: nothing was accessed often enough to stand out");
    } else {
        let mut rows = vec![["range", "size", "access", "age", "nodes", "remote", "what"]
            .iter()
            .map(|s| s.to_string())
            .collect::<Vec<_>>()];
        for r in &doc.regions {
            rows.push(vec![
                format!("{}-{}", r.start, r.end),
                bytes(r.bytes),
                format!("{:.0}%", r.access_percent),
                r.age.to_string(),
                nodes(r),
                match (r.remote, r.remote_bytes) {
                    (true, Some(b)) => format!("REMOTE {}", bytes(b)),
                    (false, Some(b)) if b > 0 => bytes(b),
                    (_, Some(_)) => "-".into(),
                    (_, None) => "?".into(),
                },
                r.name.clone(),
            ]);
        }
        // The name gives way first: the range and figures never split.
        let kinds = [
            Col::Wrap,
            Col::Wrap,
            Col::Wrap,
            Col::Wrap,
            Col::Wrap,
            Col::Wrap,
            Col::Name,
        ];
        out.push_str(&table(&rows, &kinds, layout));
    }
    out
}

fn findings(doc: &HotpagesJson) -> String {
    let mut out = String::new();
    if doc.findings.is_empty() {
        let _ = writeln!(out, "No hot remote memory: the hot regions live where the threads run.");
    }
    for f in &doc.findings {
        let _ = writeln!(
            out,
            "{:<8}  {}  [{}]",
            f.severity.as_str().to_uppercase(),
            f.title,
            f.id
        );
        for e in &f.evidence {
            let _ = writeln!(out, "    evidence: {}", e.text);
        }
        let _ = writeln!(out, "    remedy:   {}\n", f.remedy);
    }
    out
}
