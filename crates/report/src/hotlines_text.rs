//! `hotlines` as text: one block per line, contended first.

use std::fmt::Write;

use numasleuth_analyze::hotlines::NamedLine;

use crate::hotlines_json::HotlinesDocument;

fn ids(list: &[u32]) -> String {
    if list.is_empty() {
        return "none".into();
    }
    numasleuth_parse::human_list(list)
}

pub fn render(doc: &HotlinesDocument) -> String {
    let mut out = String::new();
    let accesses = doc.samples.saturating_sub(doc.no_memory_samples);
    let _ = writeln!(
        out,
        "hotlines of process {} ({}, {} samples in {:.1} s from {} thread(s); {} at a memory access, {:.1}% unknown)",
        doc.pid,
        doc.method,
        doc.samples,
        doc.duration_s,
        doc.threads_sampled,
        accesses,
        doc.unknown_share * 100.0
    );
    let _ = writeln!(
        out,
        "samples are time-weighted: a line's count is how often a thread was about to touch it when the timer fired"
    );
    if doc.lines.is_empty() {
        let _ = writeln!(out, "\nno memory access was sampled");
    }
    let contended = doc.lines.iter().filter(|l| l.line.contended).count();
    if contended == 0 && !doc.lines.is_empty() {
        let _ = writeln!(
            out,
            "\nno contended line: each line sampled was used by one thread on one node"
        );
    }
    for (rank, named) in doc.lines.iter().enumerate() {
        line_block(&mut out, rank, named);
    }
    if !doc.unknown.is_empty() {
        let why: Vec<String> = doc.unknown.iter().map(|(k, v)| format!("{k}: {v}")).collect();
        let _ = writeln!(out, "\nunknown addresses: {}", why.join(", "));
    }
    if let Some(step) = &doc.next_step {
        let _ = writeln!(out, "\nnext: {step}");
    }
    for note in &doc.notes {
        let _ = writeln!(out, "note: {note}");
    }
    out
}

/// One ranked line: its address and names, its counts, why it is
/// contended, and with false sharing each symbol's use.
fn line_block(out: &mut String, rank: usize, named: &NamedLine) {
    let l = &named.line;
    let names = if named.symbols.is_empty() {
        named.region.clone()
    } else {
        format!("{} ({})", named.symbols.join(", "), named.region)
    };
    let flag = match (l.contended, named.false_sharing) {
        (true, true) => "  CONTENDED, FALSE SHARING",
        (true, false) => "  CONTENDED",
        _ => "",
    };
    let _ = writeln!(out, "\n#{:<3} {:#x}  {names}{flag}", rank + 1, l.address);
    let _ = writeln!(
        out,
        "     {} samples: {} writes ({} read-modify-write), {} reads; threads {} (writers {}); cpus {}; nodes {}",
        l.samples,
        l.writes,
        l.read_modify_writes,
        l.reads,
        ids(&l.threads),
        ids(&l.writer_threads),
        ids(&l.cpus),
        ids(&l.nodes)
    );
    for reason in &l.reasons {
        let _ = writeln!(out, "     {reason}");
    }
    if named.false_sharing {
        for u in &named.symbol_use {
            let _ = writeln!(
                out,
                "     {}: {} writes, {} reads, threads {}",
                u.name,
                u.writes,
                u.reads,
                ids(&u.threads)
            );
        }
    }
}
