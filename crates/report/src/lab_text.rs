//! The lab's tables for people: one row per configuration with the median
//! and its p10–p90 range, then the "what this means" lines and warnings.

use numasleuth_analyze::lab::Ratio;
use numasleuth_analyze::stats::Summary;

use crate::lab_svg::si;
use crate::layout::TextLayout;
use crate::table::columns;
use numasleuth_analyze::lab::documents::{FalseSharingDocument, LocksDocument, RemoteGlobalDocument, RunInfo};

pub fn false_sharing(doc: &FalseSharingDocument, layout: &TextLayout) -> String {
    let mut out = header("false-sharing", &doc.run);
    out.push_str(&format!(
        "counters on node {}{}\n\n",
        doc.counters_node,
        verified(doc.placement_verified)
    ));
    let mut rows = vec![vec![
        "op".to_string(),
        "layout".into(),
        "placement".into(),
        "threads".into(),
        "CPUs".into(),
        "ops/s total (p10–p90)".into(),
        "ops/s per thread".into(),
        "ms per 10M ops/thread".into(),
        "slowdown vs 1 thread".into(),
        "vs padded".into(),
        "CPU share".into(),
    ]];
    for r in &doc.results {
        rows.push(vec![
            r.op.to_string(),
            r.layout.to_string(),
            r.placement.to_string(),
            r.threads.to_string(),
            cpus(&r.cpus),
            spread(&r.ops_per_sec),
            si(r.ops_per_sec_per_thread.median),
            ms(&r.ms_per_10m_ops_per_thread),
            ratio(r.slowdown_vs_1_thread),
            ratio(r.slowdown_vs_padded),
            share(r.cpu_share.as_ref()),
        ]);
    }
    out.push_str(&columns(&rows, layout));
    footer(&mut out, &doc.meaning, &doc.warnings);
    out
}

pub fn locks(doc: &LocksDocument, layout: &TextLayout) -> String {
    let mut out = header("locks", &doc.run);
    out.push_str(&format!(
        "lock on node {}{}; rates are lock/unlock pairs per second\n\n",
        doc.lock_node,
        verified(doc.placement_verified)
    ));
    let mut rows = vec![vec![
        "load".to_string(),
        "lock".into(),
        "placement".into(),
        "threads".into(),
        "CPUs".into(),
        "pairs/s total (p10–p90)".into(),
        "pairs/s per thread".into(),
        "slowdown vs 1 thread".into(),
        "CPU share".into(),
    ]];
    for r in &doc.results {
        rows.push(vec![
            r.load.to_string(),
            r.lock.to_string(),
            r.placement.to_string(),
            r.threads.to_string(),
            cpus(&r.cpus),
            spread(&r.ops_per_sec),
            si(r.ops_per_sec_per_thread.median),
            ratio(r.slowdown_vs_1_thread),
            share(r.cpu_share.as_ref()),
        ]);
    }
    out.push_str(&columns(&rows, layout));
    footer(&mut out, &doc.meaning, &doc.warnings);
    out
}

pub fn remote_global(doc: &RemoteGlobalDocument, layout: &TextLayout) -> String {
    let mut out = header("remote-global", &doc.run);
    out.push_str(&format!(
        "workers on node {}; each operation: {} words of private work and {} write{} to the global; remote node: {}\n\n",
        doc.node,
        doc.local_words_per_op,
        doc.writes_per_op,
        if doc.writes_per_op == 1 { "" } else { "s" },
        doc.remote_node.map_or("none".to_string(), |n| n.to_string())
    ));
    let mut rows = vec![vec![
        "global".to_string(),
        "on node".into(),
        "threads".into(),
        "CPUs".into(),
        "ops/s total (p10–p90)".into(),
        "ops/s per thread".into(),
        "slowdown vs per-thread".into(),
        "CPU share".into(),
        "placement".into(),
    ]];
    for r in &doc.results {
        rows.push(vec![
            r.global.to_string(),
            r.global_node.to_string(),
            r.threads.to_string(),
            cpus(&r.cpus),
            spread(&r.ops_per_sec),
            si(r.ops_per_sec_per_thread.median),
            ratio(r.slowdown_vs_per_thread),
            share(r.cpu_share.as_ref()),
            if r.placement_verified {
                "verified"
            } else {
                "NOT verified"
            }
            .to_string(),
        ]);
    }
    out.push_str(&columns(&rows, layout));
    if !doc.transfers.is_empty() {
        out.push_str("\nOne line transfer (compare-and-swap ping-pong, round trip / 2):\n");
        let mut rows = Vec::new();
        for t in &doc.transfers {
            let cycles = match doc.cycles_per_ns {
                Some(c) => format!("{:.0} reference cycles", t.ns.median * c),
                None => String::new(),
            };
            rows.push(vec![
                format!("  line on node {} ({})", t.home_node, t.global),
                format!("CPUs {}↔{}", t.cpus[0], t.cpus[1]),
                format!("{:.0} ns ({:.0}–{:.0})", t.ns.median, t.ns.p10, t.ns.p90),
                cycles,
            ]);
        }
        out.push_str(&columns(&rows, layout));
    }
    footer(&mut out, &doc.meaning, &doc.warnings);
    out
}

fn header(experiment: &str, run: &RunInfo) -> String {
    format!(
        "numasleuth lab {experiment}: {}, {} node{}, CPUs {}; {} sample{} of {} ms per configuration after a \
         warm-up{}\n",
        run.cpu_model.as_deref().unwrap_or("unknown CPU"),
        run.nodes.len(),
        if run.nodes.len() == 1 { "" } else { "s" },
        cpus(&run.allowed_cpus),
        run.samples_per_config,
        if run.samples_per_config == 1 { "" } else { "s" },
        run.sample_ms,
        if run.oversubscribed {
            "; OVERSUBSCRIBED (more threads than CPUs)"
        } else {
            ""
        }
    )
}

fn footer(out: &mut String, meaning: &[String], warnings: &[String]) {
    if !meaning.is_empty() {
        out.push_str("\nWhat this means:\n");
        for line in meaning {
            out.push_str(&format!("  - {line}\n"));
        }
    }
    if !warnings.is_empty() {
        out.push('\n');
        for line in warnings {
            out.push_str(&format!("warning: {line}\n"));
        }
    }
}

fn verified(ok: bool) -> &'static str {
    if ok {
        " (placement verified)"
    } else {
        " (placement NOT verified)"
    }
}

/// `0-3,8`: every list a person reads is written by one function.
fn cpus(ids: &[u32]) -> String {
    numasleuth_parse::human_list(ids)
}

fn spread(s: &Summary) -> String {
    format!("{} ({}–{})", si(s.median), si(s.p10), si(s.p90))
}

fn ms(s: &Summary) -> String {
    format!("{:.1} ({:.1}–{:.1})", s.median, s.p10, s.p90)
}

/// The least CPU share of any thread, median over samples: "99%".
fn share(s: Option<&Summary>) -> String {
    s.map_or_else(|| "?".to_string(), |s| format!("{:.0}%", s.median * 100.0))
}

fn ratio(r: Option<Ratio>) -> String {
    r.map_or_else(|| "—".to_string(), |r| r.describe())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_lists_collapse_like_numactl() {
        assert_eq!(cpus(&[0, 1, 2, 3, 8]), "0-3,8");
        assert_eq!(cpus(&[0, 1]), "0-1");
        assert_eq!(cpus(&[0, 8, 1, 9]), "0,8,1,9");
        assert_eq!(cpus(&[5]), "5");
        assert_eq!(cpus(&[]), "");
    }
}
