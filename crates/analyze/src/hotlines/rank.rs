//! Ranking lines: contended ones first, then by samples.
//!
//! A line is contended when one thread writes it and another thread reads
//! or writes it (each write invalidates the others' copies), or when it is
//! touched from more than one node. Within that order, more samples (more
//! of the threads' time spent about to touch it) rank higher.

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;

use super::{Counts, LineTally, Tally};

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct HotLine {
    pub address: u64,
    pub samples: u64,
    pub reads: u64,
    /// Read-modify-writes count as both a read and a write.
    pub writes: u64,
    pub read_modify_writes: u64,
    pub threads: Vec<u32>,
    pub writer_threads: Vec<u32>,
    pub cpus: Vec<u32>,
    pub nodes: Vec<u32>,
    pub contended: bool,
    /// Why it is contended, in words.
    pub reasons: Vec<String>,
    /// Per thread: reads and writes.
    pub per_thread: BTreeMap<u32, Counts>,
    /// Per node of the sampled CPUs: reads and writes (the nodes are
    /// bounded by the machine's).
    pub per_node: BTreeMap<u32, Counts>,
    /// Per thread: the nodes it touched the line from.
    pub thread_nodes: BTreeMap<u32, BTreeSet<u32>>,
    /// Touches past the per-line thread/offset caps.
    pub untracked: u64,
}

/// How one symbol on a line was used.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct LineSymbolUse {
    pub name: String,
    pub reads: u64,
    pub writes: u64,
    pub threads: Vec<u32>,
}

fn hot_line(address: u64, t: &LineTally) -> HotLine {
    let threads: Vec<u32> = t.threads.keys().copied().collect();
    let writer_threads: Vec<u32> = t
        .threads
        .iter()
        .filter(|(_, c)| c.writes > 0)
        .map(|(tid, _)| *tid)
        .collect();
    let mut reasons = Vec::new();
    if !writer_threads.is_empty() && threads.len() >= 2 {
        reasons.push(format!(
            "written by {} thread(s), touched by {}",
            writer_threads.len(),
            threads.len()
        ));
    }
    if t.nodes.len() >= 2 {
        reasons.push(format!("touched from {} nodes", t.nodes.len()));
    }
    HotLine {
        address,
        samples: t.samples,
        reads: t.reads,
        writes: t.writes,
        read_modify_writes: t.rmw,
        threads,
        writer_threads,
        cpus: t.cpus.iter().copied().collect(),
        nodes: t.nodes.iter().copied().collect(),
        contended: !reasons.is_empty(),
        reasons,
        per_thread: t.threads.clone(),
        per_node: t.per_node.clone(),
        thread_nodes: t.thread_nodes.clone(),
        untracked: t.untracked,
    }
}

/// The `top` highest-ranked lines.
pub fn rank(tally: &Tally, top: usize) -> Vec<HotLine> {
    let mut order: Vec<(&u64, &LineTally)> = tally.lines.iter().collect();
    order.sort_by(|(a_addr, a), (b_addr, b)| {
        let key = |t: &LineTally| {
            let writers = t.threads.values().filter(|c| c.writes > 0).count();
            (writers > 0 && t.threads.len() >= 2) || t.nodes.len() >= 2
        };
        key(b)
            .cmp(&key(a))
            .then(b.samples.cmp(&a.samples))
            .then(a_addr.cmp(b_addr))
    });
    order.into_iter().take(top).map(|(a, t)| hot_line(*a, t)).collect()
}

/// How each symbol on the line (name, offset range in the line) was used,
/// and whether that is false sharing: two or more different symbols used,
/// at least one written, by two or more threads in all; or one symbol (an
/// array of per-thread counters) whose threads each touch bytes no other
/// thread touches, at least one writing. Offsets are where accesses start,
/// so two threads touching overlapping bytes from different starts would
/// count as apart; sampled programs index arrays by element, where they
/// do not.
pub fn false_sharing(tally: &LineTally, symbols: &[(String, std::ops::Range<u64>)]) -> (Vec<LineSymbolUse>, bool) {
    let mut uses: Vec<LineSymbolUse> = Vec::new();
    let mut elements_apart = false;
    for (name, range) in symbols {
        let mut counts = Counts::default();
        let mut threads = BTreeSet::new();
        let mut owner_of_offset: BTreeMap<u8, Option<u32>> = BTreeMap::new();
        for ((tid, offset), c) in &tally.offsets {
            if range.contains(&u64::from(*offset)) {
                counts.reads += c.reads;
                counts.writes += c.writes;
                threads.insert(*tid);
                let owner = owner_of_offset.entry(*offset).or_insert(Some(*tid));
                if *owner != Some(*tid) {
                    *owner = None;
                }
            }
        }
        let apart = owner_of_offset.values().all(Option::is_some);
        elements_apart |= threads.len() >= 2 && apart && counts.writes > 0;
        if !threads.is_empty() {
            uses.push(LineSymbolUse {
                name: name.clone(),
                reads: counts.reads,
                writes: counts.writes,
                threads: threads.into_iter().collect(),
            });
        }
    }
    let all_threads: BTreeSet<u32> = uses.iter().flat_map(|u| u.threads.iter().copied()).collect();
    let is_false = elements_apart || (uses.len() >= 2 && uses.iter().any(|u| u.writes > 0) && all_threads.len() >= 2);
    (uses, is_false)
}
