//! `bisect` as text: the candidates, the baseline, one row per step, the
//! verdict with the culprit's symbols, and where the pages are now.

use std::fmt::Write;

use numasleuth_analyze::bisect::VerdictKind;

use crate::format;
use crate::layout::TextLayout;
use crate::table::columns;
use numasleuth_analyze::bisect::document::{BisectDocument, StepRecord};

fn number(value: f64) -> String {
    if value.abs() >= 100.0 {
        format!("{value:.0}")
    } else {
        format!("{value:.3}")
    }
}

fn percent(value: f64) -> String {
    format!("{:+.1}%", value * 100.0)
}

fn heading(doc: &BisectDocument, out: &mut String) {
    let what: Vec<&str> = doc.targets.iter().map(|t| t.what.as_str()).collect();
    let _ = writeln!(
        out,
        "bisect: process {} ({}), {}: {} page(s) of {} take part",
        doc.pid,
        doc.comm,
        what.join(", "),
        doc.candidate_pages,
        format::bytes(doc.page_bytes)
    );
    for (why, pages) in &doc.left_out {
        let _ = writeln!(out, "  left out: {pages} page(s) {why}");
    }
    let better = if doc.lower_is_better { "lower" } else { "higher" };
    let _ = writeln!(
        out,
        "metric: `{}` ({better} is better), {} reading(s) per batch after {} ms settle; a step counts when every \
         reading lies beyond the baseline's range by more than {:.1}% of its median; in between, up to {} batches \
         (each followed by more baseline readings), then at least {:.0}% of (step, baseline) reading pairs must \
         differ by that much the same way",
        doc.metric_cmd,
        doc.rounds,
        doc.settle_ms,
        doc.min_change * 100.0,
        doc.batches_max,
        numasleuth_analyze::bisect::FINAL_PAIRS_MIN * 100.0
    );
    if let Some(b) = &doc.baseline {
        let _ = writeln!(
            out,
            "baseline: median {} (min {}, max {}, {} reading(s))",
            number(b.median),
            number(b.min),
            number(b.max),
            b.values.len()
        );
    }
}

fn steps(doc: &BisectDocument, layout: &TextLayout, out: &mut String) {
    if doc.steps.is_empty() {
        return;
    }
    let mut rows = vec![
        ["step", "pages", "from", "moved", "n", "median", "min-max", "change", ""]
            .map(String::from)
            .to_vec(),
    ];
    for (i, s) in doc.steps.iter().enumerate() {
        rows.push(vec![
            (i + 1).to_string(),
            s.pages.to_string(),
            s.first_address.to_string(),
            s.pages_moved.to_string(),
            s.readings.values.len().to_string(),
            number(s.metric),
            format!("{}-{}", number(s.readings.min), number(s.readings.max)),
            percent(s.change),
            outcome(s),
        ]);
    }
    out.push('\n');
    out.push_str(&columns(&rows, layout));
}

/// The last column: whether the step counted, how, and whether it was a
/// second look.
fn outcome(s: &StepRecord) -> String {
    let how = match (s.changed, s.separated) {
        (true, true) => "changed".to_string(),
        (true, false) => format!("changed ({:.0}% of pairs)", s.pairs_beyond * 100.0),
        (false, _) => String::new(),
    };
    match (s.recheck, how.is_empty()) {
        (true, true) => "again: no change".into(),
        (true, false) => format!("again: {how}"),
        (false, _) => how,
    }
}

fn verdict(doc: &BisectDocument, out: &mut String) {
    out.push('\n');
    match doc.verdict {
        Some(VerdictKind::NoEffect) => {
            let _ = writeln!(
                out,
                "verdict: placement of these pages does not matter: moving all {} of them changed the metric by less \
                 than the rule requires",
                doc.candidate_pages
            );
        }
        Some(kind) => {
            let which = if kind == VerdictKind::Page {
                "one page carries the effect"
            } else {
                "the effect needs these pages together (neither half alone changed the metric, each measured twice)"
            };
            let _ = writeln!(out, "verdict: {which}:");
            for c in &doc.culprit_pages {
                let symbols = if c.symbol_details.is_empty() {
                    "no data symbol on it".to_string()
                } else {
                    c.symbol_details.join(", ")
                };
                let object = c.object.as_deref().unwrap_or("unknown mapping");
                let _ = writeln!(
                    out,
                    "  page {} of {object} (node {} -> {}): {symbols}",
                    c.address, c.home_node, c.away_node
                );
            }
            if let Some(first) = doc.culprit_pages.iter().find_map(|c| c.symbols.first()) {
                let _ = writeln!(
                    out,
                    "next: numasleuth lines -p {pid} --symbol {first}   (who shares its cache line)\n      \
                     numasleuth watch -p {pid} --symbol {first}   (which code writes it)",
                    pid = doc.pid
                );
            }
        }
        None => {
            let why = doc.stopped.as_deref().unwrap_or("stopped");
            let _ = writeln!(out, "verdict: none, the search stopped: {why}");
        }
    }
}

fn restore(doc: &BisectDocument, out: &mut String) {
    if !doc.applied {
        let _ = writeln!(
            out,
            "\ndry run: nothing moved. With --apply, bisect writes a journal, then moves at most {} set(s) of pages \
             and back, and restores every page at the end",
            numasleuth_analyze::bisect::max_moves(doc.candidate_pages as usize)
        );
        return;
    }
    let Some(r) = &doc.restore else {
        if let Some(journal) = &doc.journal {
            let _ = writeln!(
                out,
                "the final check of where the pages are failed: the journal {journal} is kept; `numasleuth undo {journal}` \
                 moves back any page still away"
            );
        }
        return;
    };
    let mut line = format!("pages: {} of {} back on the node they started on", r.home, r.pages);
    if r.sent_home_at_end > 0 {
        let _ = write!(line, " ({} sent back by the final check)", r.sent_home_at_end);
    }
    if r.elsewhere > 0 {
        let _ = write!(line, "; {} moved or dropped by something else, left alone", r.elsewhere);
    }
    let _ = writeln!(out, "{line}");
    match &doc.journal {
        Some(journal) => {
            let _ = writeln!(
                out,
                "{} page(s) are still away: the journal {journal} is kept; `numasleuth undo {journal}` moves them back",
                r.still_away
            );
        }
        None => out.push_str("journal removed: nothing is left to undo\n"),
    }
}

pub fn render(doc: &BisectDocument, layout: &TextLayout) -> String {
    let mut out = String::new();
    heading(doc, &mut out);
    steps(doc, layout, &mut out);
    if doc.applied || doc.verdict.is_some() {
        verdict(doc, &mut out);
    }
    restore(doc, &mut out);
    for note in &doc.notes {
        let _ = writeln!(out, "note: {note}");
    }
    out
}
