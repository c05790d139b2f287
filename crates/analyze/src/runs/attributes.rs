//! What `runs` can say about where one run lived, from the same process
//! model `inspect` builds: the main binary's .bss and .data, the heap, and
//! the nodes the threads last ran on. Each becomes a categorical value so
//! that runs can be compared.

use std::collections::BTreeMap;

use numasleuth_model::process::{MemoryKind, NodeCounts, ProcessModel};
use serde::Serialize;

/// What `runs` observes of one run. The variants are declared in the
/// order of their names, so a run's `attributes` object in the JSON keeps
/// the order it had when the names were strings (a test holds this).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum RunAttribute {
    /// The node holding most of the main binary's .bss.
    BssNode,
    /// The same for its .data.
    DataNode,
    ExitCode,
    /// The node holding most of the heap.
    HeapNode,
    StartCpu,
    StartNode,
    /// The nodes the threads last ran on.
    ThreadNodes,
}

impl RunAttribute {
    pub const ALL: [RunAttribute; 7] = [
        RunAttribute::BssNode,
        RunAttribute::DataNode,
        RunAttribute::ExitCode,
        RunAttribute::HeapNode,
        RunAttribute::StartCpu,
        RunAttribute::StartNode,
        RunAttribute::ThreadNodes,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            RunAttribute::BssNode => "bss_node",
            RunAttribute::DataNode => "data_node",
            RunAttribute::ExitCode => "exit_code",
            RunAttribute::HeapNode => "heap_node",
            RunAttribute::StartCpu => "start_cpu",
            RunAttribute::StartNode => "start_node",
            RunAttribute::ThreadNodes => "thread_nodes",
        }
    }

    /// Among equally good explanations, the order a person reads a cause
    /// in: where the run started, then where its memory landed, then the
    /// finer or incidental facts.
    pub fn reading_rank(self) -> u8 {
        match self {
            RunAttribute::StartNode => 0,
            RunAttribute::BssNode => 1,
            RunAttribute::DataNode => 2,
            RunAttribute::HeapNode => 3,
            RunAttribute::ThreadNodes => 4,
            RunAttribute::StartCpu => 5,
            RunAttribute::ExitCode => 6,
        }
    }

    /// Where the run's memory and threads were at its settle time (the
    /// placement sample), as opposed to how it was started or ended.
    pub fn is_placement(self) -> bool {
        !matches!(
            self,
            RunAttribute::StartCpu | RunAttribute::StartNode | RunAttribute::ExitCode
        )
    }
}

impl std::fmt::Display for RunAttribute {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One run's observations: a categorical value per attribute.
pub type Attributes = BTreeMap<RunAttribute, String>;

/// Placement attributes of one run at its settle time.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Placement {
    /// `bss_node`, `data_node`, `heap_node`, `thread_nodes`: node ids, or
    /// `none` (mapped but not resident), or `tie:0-1`.
    pub attributes: Attributes,
    /// The main binary the sections belong to.
    pub program: Option<String>,
    /// CPU migrations of all threads so far (`nr_migrations` in
    /// /proc/PID/task/TID/sched), when the kernel shows them.
    pub cpu_migrations: Option<u64>,
    /// Why something is missing.
    pub notes: Vec<String>,
}

/// The node holding most of `counts`; `none` when nothing is resident, and
/// `tie:0-1` (the nodes as every list is written) when two or more nodes
/// hold the same largest amount.
pub fn majority_node(counts: &NodeCounts) -> String {
    let top = counts.values().copied().max().unwrap_or(0);
    if top == 0 {
        return "none".into();
    }
    let nodes: Vec<u32> = counts.iter().filter(|(_, c)| **c == top).map(|(n, _)| *n).collect();
    if nodes.len() == 1 {
        nodes[0].to_string()
    } else {
        format!("tie:{}", numasleuth_parse::human_list(&nodes))
    }
}

/// Pages per node of the program's sections of `kind`; `None` when the
/// program has no such section mapped.
fn section_pages(model: &ProcessModel, program: &str, kind: MemoryKind) -> Option<NodeCounts> {
    let mut counts: Option<NodeCounts> = None;
    for m in model
        .mappings
        .iter()
        .filter(|m| m.kind == kind && m.object.as_deref() == Some(program))
    {
        let into = counts.get_or_insert_with(NodeCounts::new);
        for (node, pages) in &m.pages_by_node {
            *into.entry(*node).or_default() += pages;
        }
    }
    counts
}

pub fn placement(model: &ProcessModel) -> Placement {
    let mut out = Placement {
        program: model.program.clone(),
        notes: model.notes.clone(),
        ..Placement::default()
    };
    match &model.program {
        Some(program) => {
            for (kind, key) in [
                (MemoryKind::Bss, RunAttribute::BssNode),
                (MemoryKind::Data, RunAttribute::DataNode),
            ] {
                if let Some(counts) = section_pages(model, program, kind) {
                    out.attributes.insert(key, majority_node(&counts));
                }
            }
        }
        None => out
            .notes
            .push("the main binary is not known: no .bss/.data placement".into()),
    }
    if let Some(heap) = model.bytes_by_kind.get(&MemoryKind::Heap) {
        out.attributes.insert(RunAttribute::HeapNode, majority_node(heap));
    }
    if !model.thread_nodes.is_empty() {
        out.attributes
            .insert(RunAttribute::ThreadNodes, model.thread_nodes.to_string());
    }
    let migrations: Vec<u64> = model.threads.iter().filter_map(|t| t.nr_migrations).collect();
    if !migrations.is_empty() && migrations.len() == model.threads.len() {
        out.cpu_migrations = Some(migrations.iter().sum());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn majority_ties_and_nothing_resident() {
        assert_eq!(majority_node(&NodeCounts::from([(0, 3), (1, 5)])), "1");
        assert_eq!(majority_node(&NodeCounts::from([(0, 4), (1, 4), (2, 1)])), "tie:0-1");
        assert_eq!(majority_node(&NodeCounts::from([(0, 4), (1, 4), (2, 4)])), "tie:0-2");
        assert_eq!(majority_node(&NodeCounts::from([(0, 4), (2, 4)])), "tie:0,2");
        assert_eq!(majority_node(&NodeCounts::from([(0, 0)])), "none");
        assert_eq!(majority_node(&NodeCounts::new()), "none");
    }

    #[test]
    fn the_victims_sections_heap_and_threads() {
        use crate::process::tests::{victim, Answers};
        // Static data and heap on node 1, threads on CPUs 0 and 2 (nodes 0, 1).
        let p = placement(&victim(1, &[0, 2], Answers::All, &[]));
        assert_eq!(p.program.as_deref(), Some("/opt/victim"));
        let expected = [
            (RunAttribute::BssNode, "1"),
            (RunAttribute::DataNode, "1"),
            (RunAttribute::HeapNode, "1"),
            (RunAttribute::ThreadNodes, "0-1"),
        ];
        let expected: Attributes = expected.iter().map(|(k, v)| (*k, v.to_string())).collect();
        assert_eq!(p.attributes, expected);
        // No sched readings in the model: migrations unknown, not zero.
        assert_eq!(p.cpu_migrations, None);
        // Per-mapping counts (no move_pages answers) still place .bss.
        let p = placement(&victim(0, &[3], Answers::None, &[]));
        assert_eq!(p.attributes[&RunAttribute::BssNode], "0");
        assert_eq!(p.attributes[&RunAttribute::ThreadNodes], "1");
    }

    #[test]
    fn attributes_are_ordered_by_name_and_serialized_as_their_names() {
        let mut by_name = RunAttribute::ALL;
        by_name.sort_by_key(|a| a.as_str());
        assert_eq!(
            by_name,
            RunAttribute::ALL,
            "declare the variants in the order of their names"
        );
        let mut sorted = RunAttribute::ALL;
        sorted.sort();
        assert_eq!(sorted, RunAttribute::ALL);
        for a in RunAttribute::ALL {
            assert_eq!(serde_json::to_value(a).unwrap(), a.as_str());
        }
        let mut ranks: Vec<u8> = RunAttribute::ALL.iter().map(|a| a.reading_rank()).collect();
        ranks.sort();
        ranks.dedup();
        assert_eq!(ranks.len(), RunAttribute::ALL.len(), "one reading rank each");
    }
}
