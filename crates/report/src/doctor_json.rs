//! `doctor --json`, schema `numasleuth.doctor/1`.
//!
//! `findings[]` (id, severity, title, evidence, remedy, incident),
//! `checks_run` and `checks_skipped[]` (id, why) are a contract; fields may
//! be added, none renamed.

use numasleuth_analyze::findings::{Diagnosis, Finding, Skipped};
use serde::Serialize;

use crate::mem_json::MemDocument;
use crate::topo_json::TopoJson;

pub const SCHEMA: &str = "numasleuth.doctor/1";

#[derive(Debug, Serialize)]
pub struct DoctorJson<'a> {
    pub schema: &'static str,
    pub findings: &'a [Finding],
    pub checks_run: &'a [&'static str],
    pub checks_skipped: &'a [Skipped],
    /// The worst severity found, or null when clean.
    pub worst: Option<&'static str>,
    pub topology: &'a TopoJson,
    /// The `numasleuth.mem/1` document of `--measure`, or null.
    pub measurements: Option<&'a MemDocument>,
}

pub fn build<'a>(
    diagnosis: &'a Diagnosis,
    topology: &'a TopoJson,
    measurements: Option<&'a MemDocument>,
) -> DoctorJson<'a> {
    DoctorJson {
        schema: SCHEMA,
        findings: &diagnosis.findings,
        checks_run: &diagnosis.checks_run,
        checks_skipped: &diagnosis.checks_skipped,
        worst: diagnosis.worst().map(|s| s.as_str()),
        topology,
        measurements,
    }
}
