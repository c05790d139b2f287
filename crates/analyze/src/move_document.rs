//! `move`'s document, as `numasleuth.move/1` writes it (report puts the
//! schema over it): the plan (what is where and what would move, as runs
//! of pages) and, with `--apply`, what moved and how it was verified. Its
//! rows are `page_move`'s values (`Target`, `PageRun`, `VmaPages`); app
//! fills the outcome, and text renders the same value.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::page_move::{keyed_by_node, MovePlan, PageRun, Target, TargetNode, VmaPages};

#[derive(Debug, Clone, Serialize)]
pub struct Applied {
    pub journal: String,
    /// Pages the kernel was asked to move.
    pub attempted: u64,
    /// Pages a move_pages query afterwards finds on the target node.
    pub verified: u64,
    /// Pages read once to end a NUMA-balancing hinting fault so they could
    /// move (and be verified).
    pub revealed: u64,
    /// Pages not found on the target node afterwards, and where they are.
    pub not_moved: Vec<PageRun>,
    /// Pages gained on the target node in the mappings holding them, per
    /// numa_maps (a second, independent view).
    pub numa_maps_gained: i64,
    pub numa_maps_agrees: bool,
}

#[derive(Debug, Clone, Serialize)]
pub struct MoveDocument {
    pub pid: u32,
    pub comm: String,
    pub to_node: u32,
    pub to_node_has_cpus: bool,
    pub page_bytes: u64,
    pub targets: Vec<Target>,
    pub pages_total: u64,
    pub pages_by_node: BTreeMap<String, u64>,
    pub already_there: u64,
    /// Never touched (inside a mapping): nothing to move.
    pub not_present: u64,
    pub swapped_out: u64,
    /// Read, never written: the shared zero page.
    pub zero_page: u64,
    /// Outside every mapping.
    pub unmapped: u64,
    pub query_failed: u64,
    /// Resident pages hidden from move_pages between NUMA-balancing hinting
    /// faults; `--apply` ends the fault and moves them.
    pub hinting_faults: u64,
    pub hinting: Vec<PageRun>,
    /// Pages move_pages can see that would move; with `--apply`, after any
    /// hidden page was made visible.
    pub pages_to_move: u64,
    pub to_move: Vec<PageRun>,
    pub numa_maps_before: Vec<VmaPages>,
    /// Only with `--apply`.
    pub numa_maps_after: Option<Vec<VmaPages>>,
    pub applied: Option<Applied>,
    pub notes: Vec<String>,
}

impl MoveDocument {
    /// The plan part of the document; `applied` and `numa_maps_after` are
    /// filled by the caller after an apply.
    pub fn planned(
        pid: u32,
        comm: &str,
        target: &TargetNode,
        targets: Vec<Target>,
        plan: &MovePlan,
        numa_maps_before: Vec<VmaPages>,
        notes: Vec<String>,
    ) -> MoveDocument {
        MoveDocument {
            pid,
            comm: comm.to_string(),
            to_node: target.node,
            to_node_has_cpus: target.has_cpus,
            page_bytes: plan.page_bytes,
            targets,
            pages_total: plan.pages_total,
            pages_by_node: keyed_by_node(plan.by_node.iter().map(|(n, c)| (*n, *c))),
            already_there: plan.already_there,
            not_present: plan.not_present,
            swapped_out: plan.swapped_out,
            zero_page: plan.zero_page,
            unmapped: plan.unmapped,
            query_failed: plan.query_failed,
            hinting_faults: plan.pages_hinting(),
            hinting: plan.hinting.clone(),
            pages_to_move: plan.pages_to_move(),
            to_move: plan.to_move.clone(),
            numa_maps_before,
            numa_maps_after: None,
            applied: None,
            notes,
        }
    }
}
