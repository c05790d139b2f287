//! `mem` for people: matrices with p10–p90 beside every median, a heatmap
//! when colour is on, the placement proof and the interconnect verdict.

use numasleuth_analyze::stats::Summary;
use numasleuth_analyze::working_set::{ChosenBy, WorkingSet};

use crate::format;
use crate::heatmap::{grid, heat, Cell};
use crate::layout::TextLayout;
use crate::table::columns;
use numasleuth_analyze::mem_document::{BandwidthMatrix, LatencyMatrix, Loaded, MemDocument, Sweep};

/// Bandwidth is printed in GB/s of 10^9 bytes, as STREAM, MLC and likwid do.
const GB: f64 = 1e9;

fn spread_text(s: &Summary, scale: f64, decimals: usize) -> String {
    format!(
        "{:.d$} [{:.d$}–{:.d$}]",
        s.median / scale,
        s.p10 / scale,
        s.p90 / scale,
        d = decimals
    )
}

/// One coloured matrix: rows are initiator labels, columns target nodes.
fn matrix(
    corner: &str,
    targets: &[u32],
    labels: Vec<String>,
    cells: &[Vec<Option<Summary>>],
    text: impl Fn(&Summary) -> String,
    higher_is_better: bool,
    layout: &TextLayout,
) -> String {
    let medians: Vec<Option<f64>> = cells.iter().flatten().map(|c| c.map(|s| s.median)).collect();
    let mut heats = heat(&medians, higher_is_better).into_iter();
    let mut header = vec![corner.to_string()];
    header.extend(targets.iter().map(|t| format!("node {t}")));
    let rows: Vec<(String, Vec<Cell>)> = labels
        .into_iter()
        .zip(cells)
        .map(|(label, row)| {
            let cells = row
                .iter()
                .map(|c| Cell {
                    text: c.as_ref().map_or_else(|| "-".to_string(), &text),
                    heat: heats.next().flatten(),
                })
                .collect();
            (label, cells)
        })
        .collect();
    grid(&header, &rows, layout)
}

pub fn render(doc: &MemDocument, layout: &TextLayout) -> String {
    let mut out = String::new();
    if let Some(lat) = &doc.latency_ns {
        render_latency(doc, lat, layout, &mut out);
    }
    if let Some(bw) = &doc.bandwidth_bytes_per_sec {
        render_bandwidth(bw, layout, &mut out);
    }
    if let Some(sweep) = &doc.latency_sweep {
        render_sweep(doc, sweep, layout, &mut out);
    }
    if let Some(loaded) = &doc.loaded_latency {
        render_loaded(loaded, layout, &mut out);
    }
    render_verdict(doc, layout, &mut out);
    out
}

/// The idle latency matrix, and again in cycles when the clock is known.
fn render_latency(doc: &MemDocument, lat: &LatencyMatrix, layout: &TextLayout, out: &mut String) {
    out.push_str(&format!(
        "Idle latency, ns: random pointer chase over {} per cell ({}); median [p10–p90]\n",
        format::bytes(lat.buffer_bytes as u64),
        sized(&lat.working_set)
    ));
    let labels: Vec<String> = lat
        .initiators
        .iter()
        .zip(&lat.cpus)
        .map(|(n, c)| format!("node {n} (CPU {c})"))
        .collect();
    out.push_str(&matrix(
        "CPUs \\ memory",
        &lat.nodes,
        labels.clone(),
        &lat.matrix,
        |s| spread_text(s, 1.0, 1),
        false,
        layout,
    ));
    if let Some(per_ns) = doc.cycles_per_ns {
        out.push_str(&format!(
            "\nThe same in cycles at {:.2} GHz ({})\n",
            per_ns, doc.cycles_note
        ));
        out.push_str(&matrix(
            "CPUs \\ memory",
            &lat.nodes,
            labels,
            &lat.matrix,
            |s| format!("{:.0}", s.median * per_ns),
            false,
            layout,
        ));
    }
    match (&lat.self_check, &lat.self_check_skipped) {
        // A curve that has not flattened is a warning, printed with them.
        (Some(check), _) if check.flattened => out.push_str(&format!("{}.\n", capitalised(&check.message))),
        (None, Some(why)) => out.push_str(&format!("Self-check not run: {why}.\n")),
        _ => {}
    }
    out.push('\n');
}

/// How a working set was chosen, for the line above its matrix: "4× the
/// 300 MiB L3 shared by CPUs 0-15".
fn sized(set: &WorkingSet) -> String {
    let from = set.sized_from.as_ref();
    match (set.chosen_by, from) {
        (ChosenBy::Rule, Some(from)) => format!("{}× {}", from.factor, from.describe()),
        (ChosenBy::SelfCheck, _) => format!(
            "raised from the rule's {} until the latency curve flattened",
            format::bytes(set.rule_bytes)
        ),
        (ChosenBy::Size, _) => "the --size given".into(),
        (ChosenBy::FreeMemory, _) => "as much as free memory allows; see the warning".into(),
        (ChosenBy::Fallback | ChosenBy::Rule, _) => "no cache size known; see the warning".into(),
    }
}

fn capitalised(text: &str) -> String {
    let mut chars = text.chars();
    chars
        .next()
        .map_or_else(String::new, |first| first.to_uppercase().chain(chars).collect())
}

/// The bandwidth matrix.
fn render_bandwidth(bw: &BandwidthMatrix, layout: &TextLayout, out: &mut String) {
    out.push_str(&format!(
        "Bandwidth, GB/s (10^9 bytes/s): {} mix{}, {} per thread, {} in all ({}); median [p10–p90]\n",
        bw.mix,
        if bw.non_temporal_stores {
            " with non-temporal stores"
        } else {
            ""
        },
        format::bytes(bw.buffer_bytes_per_thread as u64),
        format::bytes(bw.working_set.working_set_bytes),
        sized(&bw.working_set)
    ));
    let labels = bw
        .initiators
        .iter()
        .zip(&bw.cpus)
        .map(|(n, cpus)| format!("node {n} ({} thr)", cpus.len()))
        .collect();
    out.push_str(&matrix(
        "CPUs \\ memory",
        &bw.nodes,
        labels,
        &bw.matrix,
        |s| spread_text(s, GB, 2),
        true,
        layout,
    ));
    out.push('\n');
}

/// Latency against buffer size, one row per size.
fn render_sweep(doc: &MemDocument, sweep: &Sweep, layout: &TextLayout, out: &mut String) {
    out.push_str(&format!(
        "Latency by buffer size: CPU {} chasing memory on node {}\n",
        sweep.cpu, sweep.node
    ));
    let mut rows = vec![vec![
        "size".to_string(),
        "ns".to_string(),
        "p10–p90".to_string(),
        "samples".to_string(),
    ]];
    if doc.cycles_per_ns.is_some() {
        rows[0].push("cycles".into());
    }
    for point in &sweep.points {
        let mut row = vec![format::bytes(point.size_bytes as u64)];
        match &point.latency_ns {
            Some(s) => {
                row.extend([
                    format!("{:.1}", s.median),
                    format!("{:.1}–{:.1}", s.p10, s.p90),
                    s.samples.to_string(),
                ]);
                if let Some(per_ns) = doc.cycles_per_ns {
                    row.push(format!("{:.0}", s.median * per_ns));
                }
            }
            None => row.push("-".into()),
        }
        rows.push(row);
    }
    out.push_str(&columns(&rows, layout));
    out.push('\n');
}

/// Latency against the load of the reading CPUs, one row per delay.
fn render_loaded(loaded: &Loaded, layout: &TextLayout, out: &mut String) {
    out.push_str(&format!(
        "Loaded latency: CPU {} chasing {} ({}), CPUs {} reading {} ({}), memory on node {}\n",
        loaded.latency_cpu,
        format::bytes(loaded.chase_working_set.working_set_bytes),
        sized(&loaded.chase_working_set),
        numasleuth_parse::human_list(&loaded.load_cpus),
        format::bytes(loaded.load_working_set.working_set_bytes),
        sized(&loaded.load_working_set),
        loaded.node
    ));
    let mut rows = vec![vec![
        "delay ns".to_string(),
        "GB/s".to_string(),
        "latency ns".to_string(),
        "p10–p90 ns".to_string(),
    ]];
    for point in &loaded.points {
        let bw = point
            .bandwidth_bytes_per_sec
            .map_or("-".to_string(), |s| format!("{:.2}", s.median / GB));
        let (lat, range) = point.latency_ns.map_or(("-".to_string(), String::new()), |s| {
            (format!("{:.1}", s.median), format!("{:.1}–{:.1}", s.p10, s.p90))
        });
        rows.push(vec![point.delay_ns.to_string(), bw, lat, range]);
    }
    out.push_str(&columns(&rows, layout));
    out.push('\n');
}

fn render_verdict(doc: &MemDocument, layout: &TextLayout, out: &mut String) {
    let ratios = &doc.interconnect.ratios;
    if !ratios.is_empty() {
        out.push_str("Remote vs local (ratio to the initiator's own node)\n");
        let mut rows = vec![vec![
            "from".into(),
            "to".into(),
            "latency ×".into(),
            "bandwidth ×".into(),
            "SLIT says ×".into(),
        ]];
        let f = |v: Option<f64>| v.map_or("-".to_string(), |v| format!("{v:.2}"));
        for r in ratios {
            rows.push(vec![
                r.initiator.to_string(),
                r.target.to_string(),
                f(r.latency_ratio),
                f(r.bandwidth_ratio),
                f(r.slit_ratio),
            ]);
        }
        out.push_str(&columns(&rows, layout));
        out.push('\n');
    }
    for finding in &doc.interconnect.findings {
        out.push_str(&format!("{}: {}\n", finding.severity.as_str(), finding.title));
        for line in &finding.evidence {
            out.push_str(&format!("  {}\n", line.text));
        }
        out.push_str(&format!("  remedy: {}\n", finding.remedy));
    }
    let checked: usize = doc.placements.iter().map(|p| p.pages_checked).sum();
    if doc.placement_verified {
        out.push_str(&format!(
            "Placement verified: all {checked} pages checked (move_pages) in {} buffer{} are on the node asked for ({} pages).\n",
            doc.placements.len(),
            if doc.placements.len() == 1 { "" } else { "s" },
            doc.page_kind
        ));
    } else if doc.placements.is_empty() {
        // Stopped (Ctrl-C) before any buffer was measured: nothing to list.
        out.push_str("Placement not checked: no buffer was measured.\n");
    } else {
        out.push_str("Placement NOT verified:\n");
        for p in doc.placements.iter().filter(|p| !p.verified) {
            out.push_str(&format!(
                "  {}: {} of {} checked pages on node {}{}\n",
                p.what,
                p.pages_on_node,
                p.pages_checked,
                p.node,
                p.note.as_ref().map_or(String::new(), |n| format!(" ({n})"))
            ));
        }
    }
    if let Some(overhead) = doc.timer_overhead_ns {
        out.push_str(&format!(
            "Timer overhead {overhead:.0} ns per read, subtracted from every sample.\n"
        ));
    }
    if doc.cycles_per_ns.is_none() && !doc.cycles_note.is_empty() {
        out.push_str(&format!("Cycles not shown: {}.\n", doc.cycles_note));
    }
    for warning in &doc.warnings {
        out.push_str(&format!("warning: {warning}\n"));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 36: after a Ctrl-C before any cell, the text printed an empty
    /// "Placement NOT verified:" list.
    #[test]
    fn a_run_stopped_before_any_buffer_lists_no_placements() {
        let doc = MemDocument::new();
        let text = render(&doc, &TextLayout::default());
        assert!(
            text.contains("Placement not checked: no buffer was measured."),
            "{text}"
        );
        assert!(!text.contains("Placement NOT verified"), "{text}");
    }
}
