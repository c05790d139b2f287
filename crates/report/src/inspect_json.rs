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
    Accuracy, KindGroup, MemoryKind, NodeCounts, ObjectUsage, PolicyUsage, ProcessModel, ThreadPlacement,
};
use numasleuth_parse::procfs::maps::Perms;
use numasleuth_parse::procfs::numa_maps::Policy;
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
    pub mappings: Vec<MappingJson<'a>>,
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

#[derive(Debug, Serialize)]
pub struct MappingJson<'a> {
    pub start: String,
    pub end: String,
    pub kind: MemoryKind,
    pub object: Option<&'a str>,
    pub section: Option<&'a str>,
    /// `rw-p`, as maps writes it.
    #[serde(serialize_with = "as_text")]
    pub perms: &'a Perms,
    /// `bind:0-1`, as numa_maps writes it.
    #[serde(serialize_with = "option_as_text")]
    pub policy: Option<&'a Policy>,
    pub pages_by_node: &'a NodeCounts,
    /// `pages_by_node` less pages shared with a neighbouring section and
    /// counted under it: these add up to the totals.
    pub counted_pages_by_node: &'a NodeCounts,
    /// Of the counted pages, those between NUMA-balancing hinting faults
    /// (resident, invisible to move_pages; node from numa_maps).
    pub hinting_fault_pages: u64,
    pub page_size_bytes: u64,
    pub accuracy: Accuracy,
}

/// Written straight into the output: no string per mapping.
fn as_text<S: serde::Serializer, T: std::fmt::Display>(value: &T, serializer: S) -> Result<S::Ok, S::Error> {
    serializer.collect_str(value)
}

fn option_as_text<S: serde::Serializer, T: std::fmt::Display>(
    value: &Option<&T>,
    serializer: S,
) -> Result<S::Ok, S::Error> {
    match value {
        Some(v) => serializer.collect_str(v),
        None => serializer.serialize_none(),
    }
}

pub fn build<'a>(model: &'a ProcessModel, findings: &'a [Finding]) -> InspectJson<'a> {
    let total_bytes = model.total_bytes();
    let remote_bytes = model.remote_bytes();
    let mappings: Vec<MappingJson> = model
        .mappings
        .iter()
        .map(|m| MappingJson {
            start: format!("{:#x}", m.start),
            end: format!("{:#x}", m.end),
            kind: m.kind,
            object: m.object.as_deref(),
            section: m.section.as_deref(),
            perms: &m.perms,
            policy: m.policy.as_ref(),
            pages_by_node: &m.pages_by_node,
            counted_pages_by_node: &m.counted_pages_by_node,
            hinting_fault_pages: m.hinting_fault_pages,
            page_size_bytes: m.page_size_bytes,
            accuracy: m.accuracy,
        })
        .collect();
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
