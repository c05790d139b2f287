//! `move` for people: exactly which pages would move (or moved), from
//! which nodes, as runs of pages; then how the move was verified.

use crate::format::{bytes, columns};
use crate::move_json::{MoveDocument, RunJson, VmaJson};

fn pages(n: u64) -> String {
    if n == 1 {
        "1 page".into()
    } else {
        format!("{n} pages")
    }
}

fn by_node(map: &std::collections::BTreeMap<String, u64>) -> String {
    if map.is_empty() {
        return "none resident".into();
    }
    let parts: Vec<String> = map.iter().map(|(n, c)| format!("node {n}: {c}")).collect();
    parts.join(", ")
}

fn run_rows(runs: &[RunJson], prefix: &str) -> String {
    let rows: Vec<Vec<String>> = runs
        .iter()
        .map(|r| {
            vec![
                r.start.clone(),
                pages(r.pages),
                match r.node {
                    Some(n) => format!("{prefix} node {n}"),
                    None => "not resident".into(),
                },
            ]
        })
        .collect();
    columns(&rows).lines().map(|l| format!("    {l}\n")).collect()
}

fn vmas(title: &str, list: &[VmaJson]) -> String {
    let mut out = format!("  numa_maps {title}:\n");
    if list.is_empty() {
        out.push_str("    (no mapping)\n");
    }
    for v in list {
        out.push_str(&format!("    {}-{}  {}\n", v.start, v.end, by_node(&v.pages_by_node)));
    }
    out
}

pub fn render(doc: &MoveDocument) -> String {
    let mut out = format!("move process {} ({}) to node {}:\n", doc.pid, doc.comm, doc.to_node);
    for t in &doc.targets {
        out.push_str(&format!("  {} {}-{}\n", t.what, t.start, t.end));
    }
    out.push_str(&format!(
        "  {} of {}: {}\n",
        pages(doc.pages_total),
        bytes(doc.page_bytes),
        by_node(&doc.pages_by_node)
    ));
    if doc.not_present > 0 {
        out.push_str(&format!(
            "  not resident: {} (never touched or swapped out; placed on the node where first touched)\n",
            pages(doc.not_present)
        ));
    }
    if doc.unmapped > 0 {
        out.push_str(&format!("  zero page or unmapped: {}\n", pages(doc.unmapped)));
    }
    if doc.query_failed > 0 {
        out.push_str(&format!("  could not be queried: {}\n", pages(doc.query_failed)));
    }
    if doc.already_there > 0 {
        out.push_str(&format!(
            "  already on node {}: {}\n",
            doc.to_node,
            pages(doc.already_there)
        ));
    }
    let verb = if doc.applied.is_some() { "moved" } else { "would move" };
    if doc.pages_to_move == 0 {
        out.push_str(&format!(
            "  nothing to move: no resident page is off node {}\n",
            doc.to_node
        ));
    } else {
        out.push_str(&format!(
            "  {verb} {} to node {}:\n",
            pages(doc.pages_to_move),
            doc.to_node
        ));
        out.push_str(&run_rows(&doc.to_move, "from"));
    }
    out.push_str(&vmas("before, mappings holding them", &doc.numa_maps_before));
    if let Some(after) = &doc.numa_maps_after {
        out.push_str(&vmas("after", after));
    }
    for note in &doc.notes {
        out.push_str(&format!("note: {note}\n"));
    }
    match &doc.applied {
        None if doc.pages_to_move > 0 => {
            out.push_str("dry run: nothing was moved; add --apply to move them (an undo journal is written first)\n")
        }
        None => {}
        Some(a) => {
            out.push_str(&format!(
                "verified with move_pages: {} of {} on node {}",
                a.verified, a.attempted, doc.to_node
            ));
            out.push_str(&format!(
                "; numa_maps: node {} {} {} page(s) in those mappings{}\n",
                doc.to_node,
                if a.numa_maps_gained >= 0 { "gained" } else { "lost" },
                a.numa_maps_gained.unsigned_abs(),
                if a.numa_maps_agrees {
                    " (agrees)"
                } else {
                    " (does not agree)"
                }
            ));
            if !a.not_moved.is_empty() {
                out.push_str("  not on the target node afterwards:\n");
                out.push_str(&run_rows(&a.not_moved, "on"));
            }
            out.push_str(&format!(
                "journal: {} (move them back with `numasleuth undo {}`)\n",
                a.journal, a.journal
            ));
        }
    }
    out
}
