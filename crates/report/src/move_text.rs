//! `move` for people: exactly which pages would move (or moved), from
//! which nodes, as runs of pages; then how the move was verified.

use crate::format::bytes;
use crate::layout::TextLayout;
use crate::table::columns;
use numasleuth_analyze::move_document::{Applied, MoveDocument};
use numasleuth_analyze::page_move::{keyed_by_node, PageRun, VmaPages};
use numasleuth_model::hex::Hex;

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

fn run_rows(runs: &[PageRun], prefix: &str, layout: &TextLayout) -> String {
    let rows: Vec<Vec<String>> = runs
        .iter()
        .map(|r| {
            vec![
                Hex(r.start).to_string(),
                pages(r.pages),
                match (r.node, r.state) {
                    (Some(n), _) => format!("{prefix} node {n}"),
                    (None, Some(state)) => state.describe(),
                    (None, None) => "on no node".into(),
                },
            ]
        })
        .collect();
    columns(&rows, &layout.indented(4))
        .lines()
        .map(|l| format!("    {l}\n"))
        .collect()
}

fn vmas(title: &str, list: &[VmaPages]) -> String {
    let mut out = format!("  numa_maps {title}:\n");
    if list.is_empty() {
        out.push_str("    (no mapping)\n");
    }
    for v in list {
        let (start, end) = (Hex(v.span.start), Hex(v.span.end));
        out.push_str(&format!(
            "    {start}-{end}  {}\n",
            by_node(&keyed_by_node(v.pages_by_node.iter().copied()))
        ));
    }
    out
}

pub fn render(doc: &MoveDocument, layout: &TextLayout) -> String {
    let mut out = format!("move process {} ({}) to node {}:\n", doc.pid, doc.comm, doc.to_node);
    for t in &doc.targets {
        out.push_str(&format!("  {} {}-{}\n", t.what, Hex(t.start), Hex(t.end)));
    }
    out.push_str(&format!(
        "  {} of {}: {}\n",
        pages(doc.pages_total),
        bytes(doc.page_bytes),
        by_node(&doc.pages_by_node)
    ));
    left_out(doc, layout, &mut out);
    planned(doc, layout, &mut out);
    out.push_str(&vmas("before, mappings holding them", &doc.numa_maps_before));
    if let Some(after) = &doc.numa_maps_after {
        out.push_str(&vmas("after", after));
    }
    for note in &doc.notes {
        out.push_str(&format!("note: {note}\n"));
    }
    match &doc.applied {
        None if doc.pages_to_move > 0 || doc.hinting_faults > 0 => {
            out.push_str("dry run: nothing was moved; add --apply to move them (an undo journal is written first)\n")
        }
        None => {}
        Some(a) => applied(doc, a, layout, &mut out),
    }
    out
}

/// Pages that take no part in the move, by why.
fn left_out(doc: &MoveDocument, layout: &TextLayout, out: &mut String) {
    if doc.hinting_faults > 0 {
        out.push_str(&format!(
            "  between NUMA-balancing hinting faults: {} (resident, but hidden from move_pages until touched)\n",
            pages(doc.hinting_faults)
        ));
        out.push_str(&run_rows(&doc.hinting, "on", layout));
    }
    if doc.not_present > 0 {
        out.push_str(&format!(
            "  not yet touched: {} (nothing to move: placed on the node where first touched)\n",
            pages(doc.not_present)
        ));
    }
    if doc.swapped_out > 0 {
        out.push_str(&format!("  swapped out: {}\n", pages(doc.swapped_out)));
    }
    if doc.zero_page > 0 {
        out.push_str(&format!(
            "  the shared zero page: {} (read, never written: nothing of this process to move)\n",
            pages(doc.zero_page)
        ));
    }
    if doc.unmapped > 0 {
        out.push_str(&format!(
            "  unmapped: {} (no mapping at those addresses)\n",
            pages(doc.unmapped)
        ));
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
}

/// What moves (or would), from where.
fn planned(doc: &MoveDocument, layout: &TextLayout, out: &mut String) {
    let verb = if doc.applied.is_some() { "moved" } else { "would move" };
    if doc.pages_to_move == 0 && doc.hinting_faults == 0 {
        out.push_str(&format!(
            "  nothing to move: no resident page is off node {}\n",
            doc.to_node
        ));
    } else if doc.pages_to_move == 0 {
        out.push_str(&format!(
            "  nothing move_pages can see is off node {}; the pages between hinting faults may be\n",
            doc.to_node
        ));
    } else {
        out.push_str(&format!(
            "  {verb} {} to node {}:\n",
            pages(doc.pages_to_move),
            doc.to_node
        ));
        out.push_str(&run_rows(&doc.to_move, "from", layout));
    }
}

/// After `--apply`: what was verified, what numa_maps says, the journal.
fn applied(doc: &MoveDocument, a: &Applied, layout: &TextLayout, out: &mut String) {
    if a.revealed > 0 {
        out.push_str(&format!(
            "read once to end a NUMA-balancing hinting fault: {}\n",
            pages(a.revealed)
        ));
    }
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
        out.push_str(&run_rows(&a.not_moved, "on", layout));
    }
    out.push_str(&format!(
        "journal: {} (move them back with `numasleuth undo {}`)\n",
        a.journal, a.journal
    ));
}

#[cfg(test)]
mod tests {
    use numasleuth_analyze::page_move::{plan, state_runs, TargetNode};
    use numasleuth_parse::pages::Residency;

    use super::*;

    fn doc(states: &[Residency]) -> MoveDocument {
        let pages: Vec<u64> = (0..states.len() as u64).map(|i| 0x4000 + i * 4096).collect();
        let target = TargetNode {
            node: 0,
            has_cpus: true,
            memory_total_bytes: None,
            note: None,
        };
        let plan = plan(&pages, states, 0, 4096);
        MoveDocument::planned(7, "victim", &target, Vec::new(), &plan, Vec::new(), Vec::new())
    }

    #[test]
    fn each_kind_of_page_is_named_for_what_it_is() {
        let text = render(
            &doc(&[
                Residency::HintingFault,
                Residency::HintingFault,
                Residency::NotYetTouched,
                Residency::ZeroPage,
                Residency::Unmapped,
                Residency::Node(1),
            ]),
            &TextLayout::new(200, false),
        );
        assert!(
            text.contains("  between NUMA-balancing hinting faults: 2 pages (resident, but hidden from move_pages until touched)\n"),
            "{text}"
        );
        assert!(
            text.contains("0x4000  2 pages  between NUMA-balancing hinting faults"),
            "{text}"
        );
        assert!(text.contains("  not yet touched: 1 page (nothing to move"), "{text}");
        assert!(text.contains("  the shared zero page: 1 page"), "{text}");
        assert!(
            text.contains("  unmapped: 1 page (no mapping at those addresses)"),
            "{text}"
        );
        assert!(text.contains("would move 1 page to node 0"), "{text}");
        assert!(!text.contains("not resident"), "{text}");
    }

    #[test]
    fn only_hidden_pages_still_make_a_dry_run_worth_applying() {
        let text = render(&doc(&[Residency::HintingFault]), &TextLayout::default());
        assert!(!text.contains("nothing to move: no resident page"), "{text}");
        assert!(text.contains("add --apply"), "{text}");
    }

    #[test]
    fn pages_left_behind_say_why() {
        let mut d = doc(&[Residency::Node(1)]);
        d.applied = Some(Applied {
            journal: "j".into(),
            attempted: 1,
            verified: 0,
            not_moved: state_runs(&[(0x4000, Residency::NotYetTouched)], 4096),
            revealed: 3,
            numa_maps_gained: 0,
            numa_maps_agrees: true,
        });
        let text = render(&d, &TextLayout::default());
        assert!(
            text.contains("read once to end a NUMA-balancing hinting fault: 3 pages"),
            "{text}"
        );
        assert!(text.contains("0x4000  1 page  not yet touched"), "{text}");
    }
}
