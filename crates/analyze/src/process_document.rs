//! `inspect`'s document, as `numasleuth.inspect/2` writes it (report puts
//! the schema over it): the process model's own values, the memory totals
//! it derives, and the findings. Text renders the same model.

use numasleuth_model::process::ProcessModel;
use serde::ser::SerializeStruct;
use serde::{Serialize, Serializer};

use crate::findings::Finding;

#[derive(Debug, Clone, Copy)]
pub struct InspectDocument<'a> {
    pub model: &'a ProcessModel,
    pub findings: &'a [Finding],
}

impl<'a> InspectDocument<'a> {
    pub fn new(model: &'a ProcessModel, findings: &'a [Finding]) -> Self {
        InspectDocument { model, findings }
    }
}

/// By hand because the model's fields and its derived totals interleave
/// in the document's order.
impl Serialize for InspectDocument<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let model = self.model;
        let mut doc = serializer.serialize_struct("InspectDocument", 18)?;
        doc.serialize_field("pid", &model.pid)?;
        doc.serialize_field("comm", &model.comm)?;
        doc.serialize_field("program", &model.program)?;
        doc.serialize_field("state", &model.state.to_string())?;
        doc.serialize_field("kernel_thread", &model.kernel_thread)?;
        doc.serialize_field("threads", &model.threads)?;
        doc.serialize_field("thread_nodes", model.thread_nodes.ids())?;
        doc.serialize_field("memory", &Memory(model))?;
        doc.serialize_field("objects", &model.objects)?;
        doc.serialize_field("policies", &model.policies)?;
        // As model lists them (addresses, perms and policy as the kernel
        // writes them); one VMA can hold several sections, so `mappings`
        // may list more entries than `vmas_total`.
        doc.serialize_field("mappings", &model.mappings)?;
        doc.serialize_field("vmas_total", &model.mappings_total)?;
        doc.serialize_field("mappings_listed", &model.mappings.len())?;
        // VMAs only in the totals, not listed.
        doc.serialize_field("vmas_omitted", &model.mappings_omitted)?;
        doc.serialize_field("per_page_static", &model.per_page_static)?;
        doc.serialize_field("findings", self.findings)?;
        doc.serialize_field("notes", &model.notes)?;
        doc.end()
    }
}

/// The process's memory: its total and where it sits, by node, kind and
/// group of kinds.
struct Memory<'a>(&'a ProcessModel);

impl Serialize for Memory<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let model = self.0;
        let total_bytes = model.total_bytes();
        // Bytes on nodes where no thread runs; null when no thread's node
        // is known.
        let remote_bytes = model.remote_bytes();
        let remote_share = remote_bytes
            .filter(|_| total_bytes > 0)
            .map(|remote| remote as f64 / total_bytes as f64);
        let mut memory = serializer.serialize_struct("Memory", 6)?;
        memory.serialize_field("total_bytes", &total_bytes)?;
        memory.serialize_field("bytes_by_node", &model.bytes_by_node)?;
        memory.serialize_field("remote_bytes", &remote_bytes)?;
        memory.serialize_field("remote_share", &remote_share)?;
        memory.serialize_field("bytes_by_kind", &model.bytes_by_kind)?;
        memory.serialize_field("bytes_by_group", &model.bytes_by_group())?;
        memory.end()
    }
}
