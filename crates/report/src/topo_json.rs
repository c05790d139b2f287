//! `topo --json`, schema `numasleuth.topo/1`: the machine as model writes
//! it (`numasleuth_model::Topology`'s `Serialize`, where the field names
//! and their order are kept), under the schema, with the warnings of its
//! reading and analysis after it.
//!
//! The names are a contract: scripts parse them. Fields may be added;
//! none may be renamed or change meaning without a new schema version.

use numasleuth_model::Topology;
use serde::Serialize;

pub const SCHEMA: &str = "numasleuth.topo/1";

/// The document's envelope; `provenance` follows the warnings (the
/// exporter adds it for `topo`; `doctor --json` carries its own).
#[derive(Debug, Serialize)]
pub struct TopoJson<'a> {
    pub schema: &'static str,
    #[serde(flatten)]
    pub topology: &'a Topology,
    pub warnings: Vec<String>,
}

pub fn build(topology: &Topology, warnings: Vec<String>) -> TopoJson<'_> {
    TopoJson {
        schema: SCHEMA,
        topology,
        warnings,
    }
}
