//! A process as `inspect` sees it: where its threads run, and where its
//! memory sits, by kind, object and section, per node.
//!
//! Built by [`ProcessBuilder`] (in `process_build`) from streamed readings,
//! so this model holds aggregates plus a bounded list of mappings, never
//! one record per mapping of a process with millions of them. Counts say
//! how exact they are: per page (move_pages) or per mapping (numa_maps).

use std::collections::BTreeMap;

use crate::mapping_kind::MappingKind;
use crate::symbol::SectionClass;
use numasleuth_parse::procfs::maps::{Backing, Perms};
use numasleuth_parse::procfs::numa_maps::{Policy, PolicyMode};
use numasleuth_parse::procfs::process::ThreadReading;
use numasleuth_parse::procfs::process::Vma;
use numasleuth_parse::IdList;
use serde::Serialize;

use crate::Topology;

pub use crate::process_build::ProcessBuilder;

/// Resident amount per node id.
pub type NodeCounts = BTreeMap<u32, u64>;

/// What a range of memory is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum MemoryKind {
    Data,
    Bss,
    Got,
    Text,
    Rodata,
    Heap,
    Stack,
    Anon,
    File,
    Shm,
    Huge,
    /// `[vdso]`, `[vvar]`, `[vsyscall]`.
    Special,
}

/// The groups the issue reports memory in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum KindGroup {
    WritableStatic,
    ReadOnlyStatic,
    Heap,
    Stack,
    Anonymous,
    File,
    SharedMemory,
    HugePages,
    Special,
}

impl MemoryKind {
    pub fn group(self) -> KindGroup {
        match self {
            MemoryKind::Data | MemoryKind::Bss | MemoryKind::Got => KindGroup::WritableStatic,
            MemoryKind::Text | MemoryKind::Rodata => KindGroup::ReadOnlyStatic,
            MemoryKind::Heap => KindGroup::Heap,
            MemoryKind::Stack => KindGroup::Stack,
            MemoryKind::Anon => KindGroup::Anonymous,
            MemoryKind::File => KindGroup::File,
            MemoryKind::Shm => KindGroup::SharedMemory,
            MemoryKind::Huge => KindGroup::HugePages,
            MemoryKind::Special => KindGroup::Special,
        }
    }

    pub fn from_class(class: SectionClass) -> MemoryKind {
        match class {
            SectionClass::Text => MemoryKind::Text,
            SectionClass::Bss => MemoryKind::Bss,
            SectionClass::Got => MemoryKind::Got,
            SectionClass::Data | SectionClass::TlsBss => MemoryKind::Data,
            SectionClass::ReadOnly | SectionClass::NotAllocated => MemoryKind::Rodata,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            MemoryKind::Data => "data",
            MemoryKind::Bss => "bss",
            MemoryKind::Got => "got",
            MemoryKind::Text => "text",
            MemoryKind::Rodata => "rodata",
            MemoryKind::Heap => "heap",
            MemoryKind::Stack => "stack",
            MemoryKind::Anon => "anon",
            MemoryKind::File => "file",
            MemoryKind::Shm => "shm",
            MemoryKind::Huge => "huge",
            MemoryKind::Special => "special",
        }
    }
}

/// How a count was obtained.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Accuracy {
    /// Each page asked with move_pages: exact at the moment of asking.
    PerPage,
    /// numa_maps' count for the whole mapping.
    PerVma,
}

/// Kernel types keep their kernel spelling in JSON.
fn as_text<S: serde::Serializer, T: std::fmt::Display>(value: &T, serializer: S) -> Result<S::Ok, S::Error> {
    serializer.collect_str(value)
}

fn option_as_text<S: serde::Serializer, T: std::fmt::Display>(
    value: &Option<T>,
    serializer: S,
) -> Result<S::Ok, S::Error> {
    match value {
        Some(v) => serializer.collect_str(v),
        None => serializer.serialize_none(),
    }
}

/// One listed range: a whole mapping, or the part of one that a section
/// covers.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct MappingUsage {
    /// Hex strings in JSON, as `inspect --json` writes them.
    #[serde(serialize_with = "crate::hex::serialize")]
    pub start: u64,
    #[serde(serialize_with = "crate::hex::serialize")]
    pub end: u64,
    pub kind: MemoryKind,
    pub object: Option<String>,
    pub section: Option<String>,
    /// As maps reads them; serialized as maps writes them (`rw-p`).
    #[serde(serialize_with = "as_text")]
    pub perms: Perms,
    /// As numa_maps reads it; serialized as it writes it (`bind:0-1`).
    #[serde(serialize_with = "option_as_text")]
    pub policy: Option<Policy>,
    /// Resident pages of `page_size_bytes` per node. A page shared by two
    /// sections is listed under both; totals count it once.
    pub pages_by_node: NodeCounts,
    /// The pages this range is counted for in the totals: `pages_by_node`
    /// less any page shared with a section that covers more of it. Sums
    /// over several ranges must use these, or a shared page counts twice.
    pub counted_pages_by_node: NodeCounts,
    /// Of `counted_pages_by_node`, pages between NUMA-balancing hinting
    /// faults: resident (pagemap), invisible to move_pages, placed by
    /// numa_maps.
    pub hinting_fault_pages: u64,
    pub page_size_bytes: u64,
    pub accuracy: Accuracy,
}

impl MappingUsage {
    pub fn resident_pages(&self) -> u64 {
        self.pages_by_node.values().sum()
    }

    /// Pages listed here but counted under a neighbouring section.
    pub fn shared_pages(&self) -> u64 {
        self.resident_pages().saturating_sub(total(&self.counted_pages_by_node))
    }
}

/// How a thread's node was decided.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum PlacedBy {
    /// The CPU it last ran on (`stat`'s `processor`), which it may still use.
    LastCpu,
    /// Its allowed CPUs: it last ran on a CPU it may no longer use. A thread
    /// that sleeps while its affinity is changed from outside (`taskset -a
    /// -p`) keeps its old CPU in `stat` until it wakes, yet it can only wake
    /// on an allowed CPU, so the allowed set is where it will run.
    AllowedCpus,
    /// Neither is known.
    Unknown,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ThreadPlacement {
    pub tid: u32,
    pub comm: String,
    /// The CPU it last ran on.
    pub cpu: Option<u32>,
    /// The node it runs on; `None` when unknown, or when it may only run on
    /// CPUs of several nodes (then `allowed_cpu_nodes` lists them).
    pub node: Option<u32>,
    pub placed_by: PlacedBy,
    /// Nodes of the CPUs it may use, when its last CPU is not one of them.
    pub allowed_cpu_nodes: Option<IdList>,
    pub allowed_cpus: Option<IdList>,
    pub allowed_nodes: Option<IdList>,
    pub nr_migrations: Option<u64>,
    pub numa_preferred_node: Option<u32>,
}

impl ThreadPlacement {
    pub fn from_reading(reading: &ThreadReading, topology: &Topology) -> Self {
        let cpu = reading.stat.processor;
        let node_of = |cpu: u32| topology.node_of_cpu(cpu);
        let allowed = reading.allowed_cpus.as_ref().filter(|a| !a.is_empty());
        let outside = matches!((cpu, allowed), (Some(c), Some(a)) if !a.contains(c));
        let (node, placed_by, allowed_cpu_nodes) = if outside {
            // The last CPU is history: place it where it may run now.
            let nodes: IdList = allowed.into_iter().flat_map(|a| a.iter()).filter_map(node_of).collect();
            let node = match nodes.ids() {
                [only] => Some(*only),
                _ => None,
            };
            (node, PlacedBy::AllowedCpus, Some(nodes))
        } else {
            let node = cpu.and_then(node_of);
            let how = if node.is_some() {
                PlacedBy::LastCpu
            } else {
                PlacedBy::Unknown
            };
            (node, how, None)
        };
        ThreadPlacement {
            tid: reading.stat.tid,
            comm: reading.stat.comm.clone(),
            cpu,
            node,
            placed_by,
            allowed_cpu_nodes,
            allowed_cpus: reading.allowed_cpus.clone(),
            allowed_nodes: reading.allowed_mems.clone(),
            nr_migrations: reading.sched.as_ref().and_then(|s| s.nr_migrations),
            numa_preferred_node: reading.sched.as_ref().and_then(|s| s.numa_preferred_nid),
        }
    }

    /// Nodes this thread runs on: its node, or every node it may run on
    /// when its allowed CPUs span several.
    pub fn nodes(&self) -> Vec<u32> {
        match (self.node, &self.allowed_cpu_nodes) {
            (Some(node), _) => vec![node],
            (None, Some(nodes)) => nodes.ids().to_vec(),
            (None, None) => Vec::new(),
        }
    }

    /// Said in plain words when the last CPU is outside the allowed set,
    /// e.g. "thread 114 last ran on CPU 2 but may now run only on 0-1
    /// (node 0)".
    pub fn moved_away(&self) -> Option<String> {
        let nodes = self.allowed_cpu_nodes.as_ref()?;
        let cpus = self.allowed_cpus.as_ref()?;
        let cpu = self.cpu?;
        let nodes = match nodes.len() {
            0 => "node unknown".to_string(),
            1 => format!("node {nodes}"),
            _ => format!("nodes {nodes}: several, so no single node is assumed"),
        };
        Some(format!(
            "thread {} last ran on CPU {cpu} but may now run only on {cpus} ({nodes})",
            self.tid
        ))
    }
}

/// A memory policy and how much memory it governs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PolicyUsage {
    /// Serialized as numa_maps writes it: `bind:0-1`.
    #[serde(serialize_with = "as_text")]
    pub policy: Policy,
    pub mode: PolicyMode,
    pub nodes: Option<IdList>,
    pub mappings: u64,
    pub bytes_by_node: NodeCounts,
}

/// One object's resident memory, by kind.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct ObjectUsage {
    pub object: String,
    pub bytes_by_kind: BTreeMap<MemoryKind, NodeCounts>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ProcessModel {
    pub pid: u32,
    pub comm: String,
    pub state: char,
    /// A kernel thread has no user memory at all.
    pub kernel_thread: bool,
    /// The program's path, when known.
    pub program: Option<String>,
    pub threads: Vec<ThreadPlacement>,
    /// Nodes where the threads run: each one's [`ThreadPlacement::nodes`].
    pub thread_nodes: IdList,
    /// Every static-section range, the heap and the stack, and the largest
    /// of the other mappings; the rest are only in the totals.
    pub mappings: Vec<MappingUsage>,
    pub mappings_total: u64,
    pub mappings_omitted: u64,
    pub bytes_by_node: NodeCounts,
    pub bytes_by_kind: BTreeMap<MemoryKind, NodeCounts>,
    pub objects: Vec<ObjectUsage>,
    pub policies: Vec<PolicyUsage>,
    /// Whether static sections were split per page (move_pages worked).
    pub per_page_static: bool,
    /// What could not be read or judged, in plain words.
    pub notes: Vec<String>,
}

/// Nodes where `threads` run: each one's [`ThreadPlacement::nodes`].
/// Memory on any other node is remote: the one definition, for `inspect`
/// and `hotpages` alike.
pub fn thread_nodes(threads: &[ThreadPlacement]) -> IdList {
    threads.iter().flat_map(ThreadPlacement::nodes).collect()
}

/// Sums saturate: counts come from untrusted numa_maps lines, and a sum
/// past `u64::MAX` must stay a (huge) number, never wrap or panic.
pub fn total(counts: &NodeCounts) -> u64 {
    counts.values().fold(0u64, |sum, count| sum.saturating_add(*count))
}

pub fn add_counts(into: &mut NodeCounts, from: &NodeCounts, scale: u64) {
    for (node, count) in from {
        let entry = into.entry(*node).or_default();
        *entry = entry.saturating_add(count.saturating_mul(scale));
    }
}

/// Bytes on nodes where none of the threads run (saturating sum); `None`
/// when no thread's node is known. The one definition, for `inspect`,
/// `top` and `serve`.
pub fn remote_bytes(by_node: &NodeCounts, thread_nodes: &IdList) -> Option<u64> {
    if thread_nodes.is_empty() {
        return None;
    }
    let remote = by_node.iter().filter(|(node, _)| !thread_nodes.contains(**node));
    Some(remote.fold(0u64, |sum, (_, bytes)| sum.saturating_add(*bytes)))
}

impl ProcessModel {
    pub fn total_bytes(&self) -> u64 {
        total(&self.bytes_by_node)
    }

    /// Bytes on nodes where no thread runs; `None` when no thread's node
    /// is known.
    pub fn remote_bytes(&self) -> Option<u64> {
        remote_bytes(&self.bytes_by_node, &self.thread_nodes)
    }

    pub fn bytes_by_group(&self) -> BTreeMap<KindGroup, NodeCounts> {
        let mut groups: BTreeMap<KindGroup, NodeCounts> = BTreeMap::new();
        for (kind, counts) in &self.bytes_by_kind {
            add_counts(groups.entry(kind.group()).or_default(), counts, 1);
        }
        groups
    }
}

pub(crate) fn is_special(backing: &Backing) -> bool {
    matches!(backing, Backing::Special(_))
}

/// The kind of a mapping no section covers.
pub(crate) fn base_kind(vma: &Vma) -> MemoryKind {
    let numa = vma.numa.as_ref();
    if numa.is_some_and(|n| n.huge) {
        return MemoryKind::Huge;
    }
    if numa.is_some_and(|n| n.heap) {
        return MemoryKind::Heap;
    }
    if numa.is_some_and(|n| n.stack) {
        return MemoryKind::Stack;
    }
    vma.mapping.kind()
}

#[cfg(test)]
#[path = "process_tests.rs"]
mod tests;
