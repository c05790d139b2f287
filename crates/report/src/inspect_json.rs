//! `inspect --json`, schema `numasleuth.inspect/2`.
//!
//! Kept names: `schema`, `pid`, `threads[]` (`tid`, `cpu`, `node`),
//! `mappings[]` (`start`, `end` as hex strings, `kind`, `object`,
//! `section`, `pages_by_node`) and `findings[]` (`id`, `severity`,
//! `title`, `evidence`, `remedy`). Fields may be added, never renamed.
//! Byte totals carry `_bytes` in their names; `pages_by_node` counts pages
//! of `page_size_bytes`, exact per page when `accuracy` is `per-page`.

use std::collections::BTreeMap;

use numasleuth_analyze::findings::Finding;
use numasleuth_model::process::{
    KindGroup, MappingUsage, MemoryKind, NodeCounts, ObjectUsage, PolicyUsage, ProcessModel, ThreadPlacement,
};
use serde::Serialize;

pub const SCHEMA: &str = "numasleuth.inspect/2";

#[derive(Debug, Serialize)]
pub struct InspectJson<'a> {
    pub schema: &'static str,
    pub pid: u32,
    pub comm: &'a str,
    pub program: Option<&'a str>,
    pub state: String,
    pub kernel_thread: bool,
    pub threads: &'a [ThreadPlacement],
    pub thread_nodes: Vec<u32>,
    pub memory: Memory,
    pub objects: &'a [ObjectUsage],
    pub policies: &'a [PolicyUsage],
    /// As model lists them (addresses, perms and policy as the kernel writes them).
    pub mappings: &'a [MappingUsage],
    /// Mappings (VMAs) the process has; `mappings` may list more entries,
    /// as one VMA can hold several sections.
    pub vmas_total: u64,
    pub mappings_listed: usize,
    /// VMAs only in the totals, not listed.
    pub vmas_omitted: u64,
    pub per_page_static: bool,
    pub findings: &'a [Finding],
    pub notes: &'a [String],
}

#[derive(Debug, Serialize)]
pub struct Memory {
    pub total_bytes: u64,
    pub bytes_by_node: NodeCounts,
    /// Bytes on nodes where no thread runs; null when no thread's node is
    /// known.
    pub remote_bytes: Option<u64>,
    pub remote_share: Option<f64>,
    pub bytes_by_kind: BTreeMap<MemoryKind, NodeCounts>,
    pub bytes_by_group: BTreeMap<KindGroup, NodeCounts>,
}

pub fn build<'a>(model: &'a ProcessModel, findings: &'a [Finding]) -> InspectJson<'a> {
    let total_bytes = model.total_bytes();
    let remote_bytes = model.remote_bytes();
    let mappings = &model.mappings;
    InspectJson {
        schema: SCHEMA,
        pid: model.pid,
        comm: &model.comm,
        program: model.program.as_deref(),
        state: model.state.to_string(),
        kernel_thread: model.kernel_thread,
        threads: &model.threads,
        thread_nodes: model.thread_nodes.ids().to_vec(),
        memory: Memory {
            total_bytes,
            bytes_by_node: model.bytes_by_node.clone(),
            remote_bytes,
            remote_share: remote_bytes
                .filter(|_| total_bytes > 0)
                .map(|r| r as f64 / total_bytes as f64),
            bytes_by_kind: model.bytes_by_kind.clone(),
            bytes_by_group: model.bytes_by_group(),
        },
        objects: &model.objects,
        policies: &model.policies,
        mappings_listed: mappings.len(),
        mappings,
        vmas_total: model.mappings_total,
        vmas_omitted: model.mappings_omitted,
        per_page_static: model.per_page_static,
        findings,
        notes: &model.notes,
    }
}
