//! What `runs` can say about where one run lived, from the same process
//! model `inspect` builds: the main binary's .bss and .data, the heap, and
//! the nodes the threads last ran on. Each becomes a categorical value so
//! that runs can be compared.

use std::collections::BTreeMap;

use numasleuth_model::process::{MemoryKind, NodeCounts, ProcessModel};
use serde::Serialize;

/// Placement attributes of one run at its settle time.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Placement {
    /// `bss_node`, `data_node`, `heap_node`, `thread_nodes`: node ids, or
    /// `none` (mapped but not resident), or `tie:0-1`.
    pub attributes: BTreeMap<String, String>,
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
            for (kind, key) in [(MemoryKind::Bss, "bss_node"), (MemoryKind::Data, "data_node")] {
                if let Some(counts) = section_pages(model, program, kind) {
                    out.attributes.insert(key.into(), majority_node(&counts));
                }
            }
        }
        None => out
            .notes
            .push("the main binary is not known: no .bss/.data placement".into()),
    }
    if let Some(heap) = model.bytes_by_kind.get(&MemoryKind::Heap) {
        out.attributes.insert("heap_node".into(), majority_node(heap));
    }
    if !model.thread_nodes.is_empty() {
        out.attributes
            .insert("thread_nodes".into(), model.thread_nodes.to_string());
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
            ("bss_node", "1"),
            ("data_node", "1"),
            ("heap_node", "1"),
            ("thread_nodes", "0-1"),
        ];
        let expected: BTreeMap<String, String> = expected.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        assert_eq!(p.attributes, expected);
        // No sched readings in the model: migrations unknown, not zero.
        assert_eq!(p.cpu_migrations, None);
        // Per-mapping counts (no move_pages answers) still place .bss.
        let p = placement(&victim(0, &[3], Answers::None, &[]));
        assert_eq!(p.attributes["bss_node"], "0");
        assert_eq!(p.attributes["thread_nodes"], "1");
    }
}
