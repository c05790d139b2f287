//! Contended cache lines from time-weighted memory accesses.
//!
//! Each access comes from one timer sample whose instruction was decoded
//! (see `numasleuth-decode`): the thread was about to touch this address
//! when the timer fired. Accesses are tallied per 64-byte line with who
//! touched it, how (read, write, read-modify-write), from which CPUs and
//! nodes, and at which offsets, so the report can name the symbols on the
//! line and tell true from false sharing. Memory is bounded: at most
//! [`MAX_LINES`] lines, [`MAX_THREADS_PER_LINE`] threads and
//! [`MAX_OFFSETS_PER_LINE`] (thread, offset) pairs per line.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use serde::Serialize;

pub mod document;
mod findings;
mod rank;
pub mod sampled;
pub mod spe_notes;
#[cfg(test)]
mod tests;

pub use findings::{confirm_command, findings, NamedLine, MIN_SAMPLES, MIN_SHARE};
pub use rank::{false_sharing, rank, HotLine, LineSymbolUse};

pub const LINE_BYTES: u64 = 64;
pub const MAX_LINES: usize = 262_144;
pub const MAX_THREADS_PER_LINE: usize = 256;
pub const MAX_OFFSETS_PER_LINE: usize = 512;

/// How a touch uses the line: model's one access-kind enum, the one the
/// decoder answers with.
pub use numasleuth_model::perf::decoded::AccessKind;

/// One decoded access of one sample.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Touch {
    pub tid: u32,
    pub cpu: Option<u32>,
    pub node: Option<u32>,
    pub address: u64,
    pub access: AccessKind,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Counts {
    pub reads: u64,
    pub writes: u64,
}

#[derive(Debug, Clone, Default)]
pub struct LineTally {
    pub samples: u64,
    pub reads: u64,
    pub writes: u64,
    pub rmw: u64,
    pub threads: BTreeMap<u32, Counts>,
    pub cpus: BTreeSet<u32>,
    pub nodes: BTreeSet<u32>,
    /// Per node of the CPU the sample was taken on: its reads and writes,
    /// so a join can tell which node touches the line most.
    pub per_node: BTreeMap<u32, Counts>,
    /// (thread, byte offset in the line) → counts.
    pub offsets: BTreeMap<(u32, u8), Counts>,
    /// Per tracked thread: the nodes it touched the line from. Two nodes
    /// mean the thread moved while it was sampled.
    pub thread_nodes: BTreeMap<u32, BTreeSet<u32>>,
    /// Touches whose thread or offset was past the caps.
    pub untracked: u64,
}

/// Everything sampled, before ranking.
#[derive(Debug, Clone, Default)]
pub struct Tally {
    /// Every sample (with or without a memory access).
    pub samples: u64,
    /// Samples at an instruction that touches no memory.
    pub no_memory: u64,
    /// Samples whose access could not be computed, by reason.
    pub unknown: BTreeMap<String, u64>,
    /// Accesses to lines past [`MAX_LINES`].
    pub dropped: u64,
    pub lines: HashMap<u64, LineTally>,
}

impl Tally {
    pub fn sample_without_memory(&mut self) {
        self.samples += 1;
        self.no_memory += 1;
    }

    pub fn sample_unknown(&mut self, why: &str) {
        self.samples += 1;
        *self.unknown.entry(why.to_string()).or_insert(0) += 1;
    }

    /// One sample whose instruction makes these accesses (a string move
    /// makes two).
    pub fn sample_with(&mut self, touches: &[Touch]) {
        self.samples += 1;
        for touch in touches {
            self.touch(touch);
        }
    }

    fn touch(&mut self, t: &Touch) {
        let line = t.address & !(LINE_BYTES - 1);
        if !self.lines.contains_key(&line) && self.lines.len() >= MAX_LINES {
            self.dropped += 1;
            return;
        }
        let tally = self.lines.entry(line).or_default();
        tally.samples += 1;
        tally.reads += u64::from(t.access.reads());
        tally.writes += u64::from(t.access.writes());
        tally.rmw += u64::from(t.access == AccessKind::ReadModifyWrite);
        tally.cpus.extend(t.cpu);
        tally.nodes.extend(t.node);
        let counts = Counts {
            reads: u64::from(t.access.reads()),
            writes: u64::from(t.access.writes()),
        };
        if let Some(node) = t.node {
            add(tally.per_node.entry(node).or_default(), counts);
        }
        let mut tracked = false;
        if tally.threads.len() < MAX_THREADS_PER_LINE || tally.threads.contains_key(&t.tid) {
            add(tally.threads.entry(t.tid).or_default(), counts);
            if let Some(node) = t.node {
                tally.thread_nodes.entry(t.tid).or_default().insert(node);
            }
            let key = (t.tid, (t.address - line) as u8);
            if tally.offsets.len() < MAX_OFFSETS_PER_LINE || tally.offsets.contains_key(&key) {
                add(tally.offsets.entry(key).or_default(), counts);
                tracked = true;
            }
        }
        tally.untracked += u64::from(!tracked);
    }

    /// Samples at a memory access whose address was found: every sample
    /// less those at no memory and those whose access is unknown.
    pub fn accesses(&self) -> u64 {
        let unknown: u64 = self.unknown.values().sum();
        self.samples.saturating_sub(self.no_memory).saturating_sub(unknown)
    }

    /// Share of samples whose access could not be computed.
    pub fn unknown_share(&self) -> f64 {
        if self.samples == 0 {
            return 0.0;
        }
        self.unknown.values().sum::<u64>() as f64 / self.samples as f64
    }
}

fn add(into: &mut Counts, more: Counts) {
    into.reads += more.reads;
    into.writes += more.writes;
}
