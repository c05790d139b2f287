//! Runs of like mappings, added up before they go into the builder's
//! B-trees. A process's mappings come in runs: a library's mappings follow
//! each other, and 50,000 anonymous ones share one kind, no object and the
//! `default` policy. Each B-tree update (per node, per kind and object, per
//! policy, the last found by its text) costs more than adding to a short
//! vector, so the builder adds each mapping to the run it continues and
//! folds a run in once, when the next mapping starts another or the stream
//! ends.
//!
//! Nothing depends on the order the sums are made in: every total is a
//! saturating sum of counts that are never negative, and the only thing a
//! first mapping decides (which `Policy` a policy's entry keeps, among
//! policies with one text) is still decided by the first of its run.

use std::collections::BTreeMap;

use numasleuth_parse::procfs::numa_maps::Policy;

use crate::process::{MemoryKind, NodeCounts, ObjectUsage, PolicyUsage};

/// Nodes one run holds at most before it is folded in: a short vector
/// searched from the start is fast only while it is short, and a corrupt
/// numa_maps may name hundreds of nodes on one line.
const NODES_PER_RUN: usize = 16;

/// Bytes per node, in the order the nodes were first seen.
#[derive(Default)]
struct NodeBytes(Vec<(u32, u64)>);

impl NodeBytes {
    /// Whether `pages` can be added without the vector growing long.
    fn has_room(&self, pages: &[(u32, u64)]) -> bool {
        self.0.len() + pages.len() <= NODES_PER_RUN
    }

    /// Adds `pages` (of `page_size_bytes` each) per node, saturating as
    /// [`super::add_pages`] does; a node with no pages still gets its
    /// entry. Into an empty run the pages go as they are, without a search
    /// (a node twice is summed when the run is folded in).
    fn add(&mut self, pages: &[(u32, u64)], page_size_bytes: u64) {
        if self.0.is_empty() {
            let bytes = |&(node, count): &(u32, u64)| (node, count.saturating_mul(page_size_bytes));
            self.0.extend(pages.iter().map(bytes));
            return;
        }
        for &(node, count) in pages {
            let bytes = count.saturating_mul(page_size_bytes);
            match self.0.iter_mut().find(|(held, _)| *held == node) {
                Some((_, sum)) => *sum = sum.saturating_add(bytes),
                None => self.0.push((node, bytes)),
            }
        }
    }

    /// Adds the sums to `into`.
    fn fold_into(&self, into: &mut NodeCounts) {
        for &(node, bytes) in &self.0 {
            let sum = into.entry(node).or_default();
            *sum = sum.saturating_add(bytes);
        }
    }
}

/// The mappings since the last fold: one run for the totals per node, one
/// per kind and object, one per policy.
#[derive(Default)]
pub(super) struct Runs {
    by_node: NodeBytes,
    kind: KindRun,
    policy: Option<PolicyRun>,
    /// Fold after every mapping (the property test's reference).
    #[cfg(test)]
    pub(super) one_by_one: bool,
}

/// Empty (`bytes` holds nothing) between runs; `object`'s buffer is kept.
#[derive(Default)]
struct KindRun {
    kind: Option<MemoryKind>,
    object: Option<String>,
    bytes: NodeBytes,
}

struct PolicyRun {
    policy: Policy,
    mappings: u64,
    bytes: NodeBytes,
}

/// The builder's B-trees the runs fold into.
pub(super) struct Totals<'a> {
    pub(super) bytes_by_node: &'a mut NodeCounts,
    pub(super) bytes_by_kind: &'a mut BTreeMap<MemoryKind, NodeCounts>,
    pub(super) objects: &'a mut BTreeMap<String, ObjectUsage>,
    pub(super) policies: &'a mut BTreeMap<String, PolicyUsage>,
}

impl Runs {
    /// Every mapping's pages, for the totals per node.
    pub(super) fn add_to_nodes(&mut self, pages: &[(u32, u64)], page_size_bytes: u64, totals: &mut Totals) {
        if !self.by_node.has_room(pages) {
            self.by_node.fold_into(totals.bytes_by_node);
            self.by_node.0.clear();
        }
        self.by_node.add(pages, page_size_bytes);
        if self.one_by_one() {
            self.fold_all(totals);
        }
    }

    /// A mapping with resident pages, under its kind and object.
    pub(super) fn add_to_kind(
        &mut self,
        (kind, object): (MemoryKind, Option<&str>),
        (pages, page_size_bytes): (&[(u32, u64)], u64),
        totals: &mut Totals,
    ) {
        let run = &self.kind;
        if run.kind != Some(kind) || run.object.as_deref() != object || !run.bytes.has_room(pages) {
            self.fold_kind(totals);
            let run = &mut self.kind;
            run.kind = Some(kind);
            // The held path's buffer is reused: no allocation per run.
            match (&mut run.object, object) {
                (Some(held), Some(object)) => {
                    held.clear();
                    held.push_str(object);
                }
                (held, object) => *held = object.map(str::to_string),
            }
        }
        self.kind.bytes.add(pages, page_size_bytes);
        if self.one_by_one() {
            self.fold_all(totals);
        }
    }

    /// A mapping with a policy, under it.
    pub(super) fn add_to_policy(
        &mut self,
        policy: &Policy,
        (pages, page_size_bytes): (&[(u32, u64)], u64),
        totals: &mut Totals,
    ) {
        let continues = matches!(&self.policy, Some(run) if run.policy == *policy && run.bytes.has_room(pages));
        if !continues {
            self.fold_policy(totals);
            self.policy = Some(PolicyRun {
                policy: policy.clone(),
                mappings: 0,
                bytes: NodeBytes::default(),
            });
        }
        if let Some(run) = &mut self.policy {
            run.mappings += 1;
            run.bytes.add(pages, page_size_bytes);
        }
        if self.one_by_one() {
            self.fold_all(totals);
        }
    }

    /// Folds every run in: at the end of the stream, before anything reads
    /// the totals.
    pub(super) fn fold_all(&mut self, totals: &mut Totals) {
        self.by_node.fold_into(totals.bytes_by_node);
        self.by_node.0.clear();
        self.fold_kind(totals);
        self.fold_policy(totals);
    }

    fn fold_kind(&mut self, totals: &mut Totals) {
        let run = &mut self.kind;
        let Some(kind) = run.kind.take() else {
            return;
        };
        if let Some(object) = &run.object {
            // Looked up by `&str` first: the path is copied only for an
            // object not seen before.
            if !totals.objects.contains_key(object.as_str()) {
                let usage = ObjectUsage {
                    object: object.clone(),
                    ..ObjectUsage::default()
                };
                totals.objects.insert(object.clone(), usage);
            }
            if let Some(usage) = totals.objects.get_mut(object.as_str()) {
                run.bytes.fold_into(usage.bytes_by_kind.entry(kind).or_default());
            }
        }
        run.bytes.fold_into(totals.bytes_by_kind.entry(kind).or_default());
        run.bytes.0.clear();
    }

    fn fold_policy(&mut self, totals: &mut Totals) {
        let Some(run) = self.policy.take() else {
            return;
        };
        // The policy's text is made once a run, not once a mapping.
        let usage = totals
            .policies
            .entry(run.policy.to_string())
            .or_insert_with(|| PolicyUsage {
                mode: run.policy.mode.clone(),
                nodes: run.policy.nodes.clone(),
                policy: run.policy.clone(),
                mappings: 0,
                bytes_by_node: NodeCounts::new(),
            });
        usage.mappings += run.mappings;
        run.bytes.fold_into(&mut usage.bytes_by_node);
    }

    #[cfg(test)]
    fn one_by_one(&self) -> bool {
        self.one_by_one
    }

    #[cfg(not(test))]
    fn one_by_one(&self) -> bool {
        false
    }
}

#[cfg(test)]
#[path = "process_runs_tests.rs"]
mod tests;
