//! The join: `doctor -p`'s observations of one process meet here, so a
//! finding names the cause ("this global, on node 0, written from node 1")
//! rather than three symptoms.
//!
//! The clues are typed observations, each from its own collector: the hot
//! cache lines of a short `hotlines` sample (with the node of each CPU a
//! sample was taken on), the node of each hot line's page (a `move_pages`
//! query: nothing moves), and the process's placement model (its mappings
//! with their ELF sections, and where its threads may run). Only here are
//! they compared; the collectors never decide.

use std::collections::BTreeMap;

use numasleuth_model::process::{KindGroup, MappingUsage, ProcessModel};
use numasleuth_parse::pages::Residency;
use serde::Serialize;

use crate::findings::{incident, Evidence, Finding, Severity};
use crate::hotlines::{Counts, NamedLine, MIN_SAMPLES, MIN_SHARE};
use crate::process::STATIC_DATA_REMOTE;

/// A hot global in a program's static data, on a node other than the one
/// that touches it most.
pub const HOT_REMOTE_GLOBAL: &str = "hot-remote-global";
/// The same for a line outside static data (heap, anonymous memory, a
/// mapped file): named by its region rather than a symbol.
pub const HOT_REMOTE_LINE: &str = "hot-remote-line";
/// The findings a hot remote line explains, when they are about its line
/// or its section.
const SYMPTOMS: [&str; 3] = [STATIC_DATA_REMOTE, "contended-line", "false-sharing"];

/// Where the page holding a hot line is, as `move_pages` answered.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct LinePage {
    pub line_address: u64,
    pub residency: Residency,
}

/// What `doctor -p` observed of one process, for the join.
#[derive(Debug, Clone, Copy)]
pub struct Clues<'a> {
    pub pid: u32,
    /// The placement model (`inspect`'s), where it could be read.
    pub model: Option<&'a ProcessModel>,
    /// The ranked, named lines of the sample.
    pub lines: &'a [NamedLine],
    /// The page of each line that was asked about.
    pub pages: &'a [LinePage],
    /// Sampled accesses in all, and over how long.
    pub accesses: u64,
    pub duration_s: f64,
}

/// One hot line whose page is remote from most of its accesses.
struct Remote<'a> {
    line: &'a NamedLine,
    page_node: u32,
    /// The node that touched it most, and its reads and writes.
    user_node: u32,
    remote: Counts,
    local: Counts,
    mapping: Option<&'a MappingUsage>,
}

/// Every hot line whose page sits on another node than most of the
/// accesses to it: one finding each, most sampled first.
pub fn hot_remote(clues: &Clues<'_>) -> Vec<Finding> {
    let pages: BTreeMap<u64, Residency> = clues.pages.iter().map(|p| (p.line_address, p.residency)).collect();
    clues
        .lines
        .iter()
        .filter(|l| is_hot(l, clues.accesses))
        .filter_map(|l| remote_line(l, pages.get(&l.line.address)?.node()?, clues.model))
        .map(|r| finding(clues, &r))
        .collect()
}

/// Enough of the sampled accesses to matter: the same bar as the
/// contended-line findings.
fn is_hot(l: &NamedLine, accesses: u64) -> bool {
    l.line.samples >= MIN_SAMPLES && l.line.samples as f64 >= MIN_SHARE * accesses.max(1) as f64
}

fn touches(c: &Counts) -> u64 {
    c.reads + c.writes
}

fn remote_line<'a>(line: &'a NamedLine, page_node: u32, model: Option<&'a ProcessModel>) -> Option<Remote<'a>> {
    let mut local = Counts::default();
    let mut remote = Counts::default();
    for (node, counts) in &line.line.per_node {
        let side = if *node == page_node { &mut local } else { &mut remote };
        side.reads += counts.reads;
        side.writes += counts.writes;
    }
    // Most of its accesses come from elsewhere: a page that half its users
    // share is placed as well as one page can be.
    if touches(&remote) <= touches(&local) {
        return None;
    }
    let (user_node, _) = line
        .line
        .per_node
        .iter()
        .filter(|(n, _)| **n != page_node)
        .max_by_key(|(n, c)| (touches(c), std::cmp::Reverse(**n)))?;
    let address = line.line.address;
    let mapping = model.and_then(|m| m.mappings.iter().find(|u| u.start <= address && address < u.end));
    Some(Remote {
        line,
        page_node,
        user_node: *user_node,
        remote,
        local,
        mapping,
    })
}

/// "nil_root (.bss of /usr/bin/prog)", or the region's name.
fn what(r: &Remote<'_>) -> (String, bool) {
    let section = r
        .mapping
        .and_then(|m| Some((m.object.as_deref()?, m.section.as_deref()?)));
    match (r.line.symbols.as_slice(), section) {
        ([], _) => (format!("the line in {}", r.line.region), false),
        (names, Some((object, section))) => (format!("{} ({section} of {object})", names.join(", ")), true),
        (names, None) => (format!("{} ({})", names.join(", "), r.line.region), true),
    }
}

fn finding(clues: &Clues<'_>, r: &Remote<'_>) -> Finding {
    let line = &r.line.line;
    let (name, global) = what(r);
    let (page, user) = (r.page_node, r.user_node);
    let per_sec = line.samples as f64 / clues.duration_s.max(1e-3);
    let evidence = vec![
        Evidence::new(
            "move_pages(2), queried (nothing moved)",
            format!("the page holding the line at {:#x} is on node {page}", line.address),
        )
        .with("line_address", line.address)
        .with("page_node", page),
        Evidence::new(
            "perf cpu-clock samples, decoded",
            format!(
                "{} of {} sampled accesses ({:.0}%, {per_sec:.0} a second) in {:.1} s touched it: from other nodes \
                 {} writes and {} reads, most from node {user}; from node {page} {} writes and {} reads",
                line.samples,
                clues.accesses,
                100.0 * line.samples as f64 / clues.accesses.max(1) as f64,
                clues.duration_s,
                r.remote.writes,
                r.remote.reads,
                r.local.writes,
                r.local.reads,
            ),
        )
        .with("line_samples", line.samples)
        .with("sampled_accesses_per_sec", per_sec)
        .with("remote_writes", r.remote.writes)
        .with("remote_reads", r.remote.reads)
        .with("local_writes", r.local.writes)
        .with("local_reads", r.local.reads)
        .with("user_node", user)
        .with("threads", line.threads.as_slice()),
    ];
    let writes = r.remote.writes > 0;
    Finding {
        id: if global { HOT_REMOTE_GLOBAL } else { HOT_REMOTE_LINE },
        // A remote write invalidates the line in the other socket's caches
        // each time: the incident itself. Remote reads cost latency only.
        severity: if writes { Severity::Critical } else { Severity::Warning },
        title: format!(
            "{name} is on node {page}, and threads on node {user} {} it: process {}",
            if writes { "write" } else { "read" },
            clues.pid
        ),
        evidence,
        remedy: remedy(clues.pid, r, global),
        incident: Some(incident::REMOTE_GLOBAL),
        explains: SYMPTOMS.to_vec(),
        confidence: None,
    }
}

fn remedy(pid: u32, r: &Remote<'_>, global: bool) -> String {
    let user = r.user_node;
    let cost = if r.remote.writes > 0 {
        "Each write from there invalidates the line on its home node and each read crosses the interconnect"
    } else {
        "Each read from there crosses the interconnect"
    };
    let test = match (
        global,
        r.line.symbols.first(),
        r.mapping.and_then(|m| m.section.as_deref()),
    ) {
        (true, Some(symbol), section) => format!(
            " Test it now: `numasleuth move -p {pid} --symbol {symbol} --to-node {user} --apply` (`numasleuth undo \
             JOURNAL` moves it back); prove it with `numasleuth bisect -p {pid} --section {} --metric-cmd CMD \
             --apply`.",
            section.unwrap_or(".bss")
        ),
        _ => format!(
            " Test it now: `numasleuth move -p {pid} --range {:#x}-{:#x} --to-node {user} --apply` (`numasleuth undo \
             JOURNAL` moves it back).",
            r.line.line.address,
            r.line.line.address + crate::hotlines::LINE_BYTES
        ),
    };
    format!(
        "{cost}. Put it where its users run: start the process on node {user} so it first-touches its data there \
         (`numactl --cpunodebind={user} --membind={user} CMD`), or place it explicitly (allocate it on that node, or \
         one copy per node).{test}"
    )
}

/// Points each symptom at its cause: a `static-data-remote` of the process
/// names the hot remote globals on its pages, and a `contended-line` or
/// `false-sharing` of the same line says where its page is. The symptoms
/// stay (each is true on its own) but cite the cause rather than leave the
/// reader to join them.
pub fn cite(findings: &mut [Finding], causes: &[Finding]) {
    for cause in causes {
        let Some(address) = cause_address(cause) else {
            continue;
        };
        // The cache-line findings name their line as "line at 0x… (": the
        // whole address, not a prefix of a longer one.
        let line_text = format!("line at {address:#x} ");
        for symptom in findings.iter_mut().filter(|f| cause.explains.contains(&f.id)) {
            let about_line = symptom.evidence.iter().any(|e| e.text.contains(&line_text));
            let about_section = symptom.id == STATIC_DATA_REMOTE;
            if about_line || about_section {
                symptom.evidence.push(
                    Evidence::new(
                        "doctor's join of the process's observations",
                        format!("explained by {} above: {}", cause.id, cause.title),
                    )
                    .with("line_address", address),
                );
            }
        }
    }
}

fn cause_address(cause: &Finding) -> Option<u64> {
    cause
        .evidence
        .iter()
        .find_map(|e| e.values.int("line_address"))
        .and_then(|v| u64::try_from(v).ok())
}

/// The hottest sampled symbols that lie in the process's writable static
/// data off the threads' node, with their samples: `static-data-remote`
/// names them, whether or not any reached a finding of its own.
pub fn hot_static_symbols(clues: &Clues<'_>) -> Vec<(String, u64)> {
    let Some(model) = clues.model else {
        return Vec::new();
    };
    let mut seen: BTreeMap<&str, u64> = BTreeMap::new();
    for l in clues.lines {
        let address = l.line.address;
        let in_static = model
            .mappings
            .iter()
            .any(|u| u.start <= address && address < u.end && u.kind.group() == KindGroup::WritableStatic);
        if !in_static {
            continue;
        }
        for u in &l.symbol_use {
            *seen.entry(u.name.as_str()).or_default() += u.reads + u.writes;
        }
    }
    let mut hot: Vec<(String, u64)> = seen.into_iter().map(|(n, s)| (n.to_string(), s)).collect();
    hot.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    hot.truncate(3);
    hot
}

/// Adds the hot symbols to the process's `static-data-remote`, if any.
pub fn name_hot_symbols(findings: &mut [Finding], hot: &[(String, u64)]) {
    if hot.is_empty() {
        return;
    }
    let text = hot
        .iter()
        .map(|(name, samples)| format!("{name} ({samples} sampled accesses)"))
        .collect::<Vec<_>>()
        .join(", ");
    for f in findings.iter_mut().filter(|f| f.id == STATIC_DATA_REMOTE) {
        f.evidence.push(
            Evidence::new(
                "perf cpu-clock samples, decoded",
                format!("the hottest symbols sampled in this static data: {text}"),
            )
            .with(
                "hot_symbol_samples",
                hot.iter().map(|(_, s)| *s).collect::<Vec<u64>>().as_slice(),
            ),
        );
    }
}

mod moves;
mod regions;
pub use moves::defer_to_moves;
pub use regions::with_hot_regions;

#[cfg(test)]
mod moves_tests;
#[cfg(test)]
mod regions_tests;
#[cfg(test)]
mod tests;
