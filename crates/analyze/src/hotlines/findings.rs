//! `doctor -p`'s cache-line findings, from a short `hotlines` sample:
//! `false-sharing` (threads writing different data that share one line)
//! and `contended-line` (threads fighting over the same data), each with
//! the symbols, the threads, and the `watch` command that confirms it.

use std::collections::BTreeSet;

use numasleuth_model::hex::Hex;
use serde::ser::{Serialize, SerializeStruct, Serializer};

use super::{HotLine, LineSymbolUse, LINE_BYTES};
use crate::findings::{incident, Evidence, Finding, Severity};

/// A ranked line with its names, as `hotlines` reports it.
#[derive(Debug, Clone, PartialEq)]
pub struct NamedLine {
    pub line: HotLine,
    pub symbols: Vec<String>,
    pub region: String,
    pub symbol_use: Vec<LineSymbolUse>,
    pub false_sharing: bool,
}

/// `hotlines --json`'s line: the address (a hex string) and names first,
/// then the counts, then the verdict. Written by hand because the names sit
/// between the line's fields; the per-thread and per-node tallies stay out
/// (the document never had them).
impl Serialize for NamedLine {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let l = &self.line;
        let mut s = serializer.serialize_struct("NamedLine", 15)?;
        s.serialize_field("address", &Hex(l.address))?;
        s.serialize_field("symbols", &self.symbols)?;
        s.serialize_field("region", &self.region)?;
        s.serialize_field("samples", &l.samples)?;
        s.serialize_field("writes", &l.writes)?;
        s.serialize_field("reads", &l.reads)?;
        s.serialize_field("read_modify_writes", &l.read_modify_writes)?;
        s.serialize_field("threads", &l.threads)?;
        s.serialize_field("writer_threads", &l.writer_threads)?;
        s.serialize_field("cpus", &l.cpus)?;
        s.serialize_field("nodes", &l.nodes)?;
        s.serialize_field("contended", &l.contended)?;
        s.serialize_field("reasons", &l.reasons)?;
        s.serialize_field("false_sharing", &self.false_sharing)?;
        s.serialize_field("symbol_use", &self.symbol_use)?;
        s.end()
    }
}

/// A line raises a finding only with this share of the sampled memory
/// accesses or more: a thread that glances at a shared line now and then
/// costs nothing worth a finding.
pub const MIN_SHARE: f64 = 0.05;
/// ... and at least this many samples, so a short sample of an idle
/// process raises nothing on a handful of hits.
pub const MIN_SAMPLES: u64 = 20;
/// Lines reported at most.
const MAX_LINES: usize = 3;

/// The command that shows which code writes the line: a watchpoint on its
/// most written symbol, else on its address.
pub fn confirm_command(pid: u32, line: &NamedLine) -> String {
    let written = line
        .symbol_use
        .iter()
        .filter(|u| u.writes > 0)
        .max_by_key(|u| u.writes)
        .map(|u| u.name.clone())
        .or_else(|| line.symbols.first().cloned());
    match written {
        Some(symbol) => format!("numasleuth watch -p {pid} --symbol {symbol}"),
        None => format!("numasleuth watch -p {pid} --addr {:#x}", line.line.address),
    }
}

/// The contended lines that take a real share of the process's time.
/// `accesses` is how many sampled accesses there were in all.
pub fn findings(pid: u32, lines: &[NamedLine], accesses: u64, duration_s: f64) -> Vec<Finding> {
    lines
        .iter()
        // Two threads or more, one writing: what moves a line between caches.
        .filter(|l| l.line.contended && l.line.threads.len() >= 2 && !l.line.writer_threads.is_empty())
        .filter(|l| l.line.samples >= MIN_SAMPLES && l.line.samples as f64 >= MIN_SHARE * accesses.max(1) as f64)
        .take(MAX_LINES)
        .map(|l| finding(pid, l, accesses, duration_s))
        .collect()
}

fn finding(pid: u32, l: &NamedLine, accesses: u64, duration_s: f64) -> Finding {
    let line = &l.line;
    let name = match l.symbols.as_slice() {
        [] => l.region.clone(),
        names => names.join(", "),
    };
    let share = line.samples as f64 / accesses.max(1) as f64;
    let mut evidence = vec![Evidence::new(
        "perf cpu-clock samples, decoded",
        format!(
            "the {LINE_BYTES}-byte line at {:#x} ({name}) drew {} of {accesses} sampled accesses ({:.0}%) in {duration_s:.1} s: \
             {} writes, {} reads, by threads {} (writers {})",
            line.address,
            line.samples,
            share * 100.0,
            line.writes,
            line.reads,
            ids(&line.threads),
            ids(&line.writer_threads)
        ),
    )
    .with("line_samples", line.samples)
    .with("accesses", accesses)
    .with("writes", line.writes)
    .with("reads", line.reads)
    .with("threads", line.threads.as_slice())
    .with("writer_threads", line.writer_threads.as_slice())];
    evidence.extend(l.symbol_use.iter().map(|u| {
        Evidence::new(
            "perf cpu-clock samples, decoded",
            format!(
                "{}: {} writes, {} reads, by threads {}",
                u.name,
                u.writes,
                u.reads,
                ids(&u.threads)
            ),
        )
        .with("writes", u.writes)
        .with("reads", u.reads)
        .with("threads", u.threads.as_slice())
    }));
    let confirm = confirm_command(pid, l);
    if l.false_sharing {
        Finding {
            id: "false-sharing",
            severity: Severity::Warning,
            confidence: None,
            title: format!("threads of process {pid} write different data on one cache line ({name})"),
            evidence,
            remedy: format!(
                "Each write takes the line from the other threads although they use other bytes of it. Give each \
                 thread's data its own 128-byte line (alignas(128), or padding between fields; `numasleuth lab \
                 false-sharing` measures the gap on this machine). Next: `{confirm}` names the code that writes it"
            ),
            incident: Some(incident::CONTENTION),
            explains: Vec::new(),
        }
    } else {
        Finding {
            id: "contended-line",
            severity: Severity::Warning,
            confidence: None,
            title: format!("threads of process {pid} contend for one cache line ({name})"),
            evidence,
            remedy: format!(
                "Every write moves the line between the threads' caches. Keep per-thread copies combined on \
                 read (counters), or use a queued lock instead of spinning on one word. Next: `{confirm}` names \
                 the code that writes it"
            ),
            incident: Some(incident::CONTENTION),
            explains: Vec::new(),
        }
    }
}

fn ids(ids: &[u32]) -> String {
    let set: BTreeSet<u32> = ids.iter().copied().collect();
    set.iter().map(u32::to_string).collect::<Vec<_>>().join(",")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hotlines::{false_sharing, rank, AccessKind, Tally, Touch};

    fn named(t: &Tally, symbols: &[(&str, std::ops::Range<u64>)]) -> Vec<NamedLine> {
        let symbols: Vec<(String, std::ops::Range<u64>)> =
            symbols.iter().map(|(n, r)| (n.to_string(), r.clone())).collect();
        rank(t, 8)
            .into_iter()
            .map(|line| {
                let (symbol_use, is_false) = false_sharing(&t.lines[&line.address], &symbols);
                NamedLine {
                    symbols: symbols.iter().map(|(n, _)| n.clone()).collect(),
                    region: ".bss of /t".into(),
                    symbol_use,
                    false_sharing: is_false,
                    line,
                }
            })
            .collect()
    }

    fn touch(tid: u32, address: u64) -> Touch {
        Touch {
            tid,
            cpu: Some(tid),
            node: Some(0),
            address,
            access: AccessKind::ReadModifyWrite,
        }
    }

    #[test]
    fn packed_counters_are_false_sharing_with_the_watch_to_run() {
        let mut t = Tally::default();
        for _ in 0..50 {
            t.sample_with(&[touch(11, 0x4000)]);
            t.sample_with(&[touch(12, 0x4008)]);
        }
        let found = findings(7, &named(&t, &[("counters", 0..64)]), 100, 1.0);
        assert_eq!(found.len(), 1);
        let f = &found[0];
        assert_eq!((f.id, f.severity), ("false-sharing", Severity::Warning));
        assert!(f.title.contains("(counters)"), "{}", f.title);
        assert!(f.evidence_text().contains("by threads 11,12"), "{}", f.evidence_text());
        assert!(f
            .remedy
            .ends_with("Next: `numasleuth watch -p 7 --symbol counters` names the code that writes it"));
    }

    #[test]
    fn one_counter_for_all_is_a_contended_line_and_noise_is_nothing() {
        let mut t = Tally::default();
        for _ in 0..50 {
            t.sample_with(&[touch(11, 0x4000)]);
            t.sample_with(&[touch(12, 0x4000)]);
        }
        let found = findings(7, &named(&t, &[("hits", 0..8)]), 100, 1.0);
        assert_eq!(found[0].id, "contended-line");
        // The same line, a sliver of a busy process's time: no finding.
        assert!(findings(7, &named(&t, &[("hits", 0..8)]), 100_000, 1.0).is_empty());
        // One thread alone: nothing to contend with.
        let mut alone = Tally::default();
        for _ in 0..50 {
            alone.sample_with(&[touch(11, 0x4000)]);
        }
        assert!(findings(7, &named(&alone, &[("hits", 0..8)]), 50, 1.0).is_empty());
    }
}
