//! `c2c` for people: the CPU×CPU matrix of medians as a heatmap, then the
//! range and any warnings.

use crate::heatmap::{grid, heat, Cell};
use crate::layout::TextLayout;
use numasleuth_analyze::c2c_document::{C2cDocument, C2cMethod};

pub fn render(doc: &C2cDocument, layout: &TextLayout) -> String {
    let mut out = format!(
        "Core-to-core latency, ns per one-way transfer ({}), line on node {}; median of {} samples each\n",
        match doc.method {
            C2cMethod::Cas => "CAS ping-pong, round trip / 2",
            C2cMethod::OneWay => "one-way store, timed by the loading CPU",
        },
        doc.home_node,
        doc.latency_ns
            .iter()
            .flatten()
            .flatten()
            .map(|s| s.samples)
            .max()
            .unwrap_or(0)
    );
    out.push_str(&matrix(doc, layout));
    out.push_str(&extremes(doc));
    if !doc.suspected_siblings.is_empty() {
        out.push_str("\nMeasured against declared topology:\n");
        for pair in &doc.suspected_siblings {
            out.push_str(&format!("  {}.\n", pair.message));
        }
    }
    out.push_str(&format!(
        "Contended line on node {}: placement {}.\n",
        doc.home_node,
        if doc.placement_verified {
            "verified (move_pages)"
        } else {
            "NOT verified"
        }
    ));
    if let Some(overhead) = doc.timer_overhead_ns {
        out.push_str(&format!("Timer overhead {overhead:.0} ns per read, subtracted.\n"));
    }
    for warning in &doc.warnings {
        out.push_str(&format!("warning: {warning}\n"));
    }
    out
}

/// The CPU×CPU heatmap of medians.
fn matrix(doc: &C2cDocument, layout: &TextLayout) -> String {
    let medians: Vec<Option<f64>> = doc.latency_ns.iter().flatten().map(|c| c.map(|s| s.median)).collect();
    let mut heats = heat(&medians, false).into_iter();
    let mut header = vec!["CPU".to_string()];
    header.extend(doc.cpus.iter().map(u32::to_string));
    let rows: Vec<(String, Vec<Cell>)> = doc
        .cpus
        .iter()
        .zip(&doc.latency_ns)
        .map(|(cpu, row)| {
            let cells = row
                .iter()
                .map(|c| Cell {
                    text: c.map_or_else(|| "-".to_string(), |s| format!("{:.1}", s.median)),
                    heat: heats.next().flatten(),
                })
                .collect();
            (cpu.to_string(), cells)
        })
        .collect();
    grid(&header, &rows, layout)
}

/// The fastest and slowest pairs, and the same in cycles when the clock is
/// known; nothing when no pair was measured.
fn extremes(doc: &C2cDocument) -> String {
    let mut out = String::new();
    let mut pairs: Vec<(u32, u32, f64, f64, f64)> = Vec::new();
    for (i, row) in doc.latency_ns.iter().enumerate() {
        for (j, cell) in row.iter().enumerate().skip(i + 1) {
            if let Some(s) = cell {
                pairs.push((doc.cpus[i], doc.cpus[j], s.median, s.p10, s.p90));
            }
        }
    }
    if let (Some(low), Some(high)) = (
        pairs.iter().min_by(|a, b| a.2.total_cmp(&b.2)),
        pairs.iter().max_by(|a, b| a.2.total_cmp(&b.2)),
    ) {
        let pair = |p: &(u32, u32, f64, f64, f64)| {
            format!("CPU {}↔{}: {:.1} ns [p10 {:.1}, p90 {:.1}]", p.0, p.1, p.2, p.3, p.4)
        };
        if pairs.len() == 1 {
            out.push_str(&format!("\nOne pair, {}\n", pair(low)));
        } else {
            out.push_str(&format!("\nFastest pair {}; slowest {}\n", pair(low), pair(high)));
        }
        if let Some(per_ns) = doc.cycles_per_ns {
            out.push_str(&format!(
                "In cycles: {:.0} to {:.0} at {:.2} GHz ({})\n",
                low.2 * per_ns,
                high.2 * per_ns,
                per_ns,
                doc.cycles_note
            ));
        }
    }
    out
}
