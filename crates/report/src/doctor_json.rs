//! `doctor --json`, schema `numasleuth.doctor/2`.
//!
//! `findings[]` (id, severity, title, evidence, remedy, incident),
//! `checks_run`, `checks_skipped[]` (id, why, unreadable) and
//! `checks_partial[]` (id, unread[] of path and why) are a contract; fields
//! may be added, none renamed.

use crate::provenance::Provenance;
use crate::schema::Schema;
use numasleuth_analyze::doctor::CheckId;
use numasleuth_analyze::findings::{Diagnosis, Finding, Partial, Skipped};
use numasleuth_parse::Unread;
use serde::Serialize;

use crate::topo_json::TopoJson;
use numasleuth_analyze::mem_document::MemDocument;

pub const SCHEMA: &str = "numasleuth.doctor/2";

/// An envelope, not a domain value: provenance and two documents under
/// their own schemas (the topology, the measurements) around the diagnosis.
#[derive(Debug, Serialize)]
pub struct DoctorJson<'a> {
    pub schema: &'static str,
    /// Which machine, kernel, time, numasleuth and source (live or snapshot).
    pub provenance: &'a Provenance,
    pub findings: &'a [Finding],
    pub checks_run: &'a [CheckId],
    pub checks_skipped: &'a [Skipped],
    /// Checks in `checks_run` that could not read all their inputs, with
    /// each file they missed: their silence is not a clean bill.
    pub checks_partial: &'a [Partial],
    /// Every check that could not read all its inputs (partial, or skipped
    /// as unreadable); empty only when every check saw all it needed.
    pub checks_incomplete: Vec<&'static str>,
    /// Every file doctor's checks read that exists but could not be used
    /// (`path`, `why`); absent files are not listed, they are answers.
    pub unread: &'a [Unread],
    /// The worst severity found, or null when clean.
    pub worst: Option<&'static str>,
    pub topology: &'a TopoJson<'a>,
    /// The `numasleuth.mem/2` document of `--measure`, or null.
    pub measurements: Option<Schema<'a, MemDocument>>,
}

pub fn build<'a>(
    provenance: &'a Provenance,
    diagnosis: &'a Diagnosis,
    unread: &'a [Unread],
    topology: &'a TopoJson<'a>,
    measurements: Option<&'a MemDocument>,
) -> DoctorJson<'a> {
    DoctorJson {
        schema: SCHEMA,
        provenance,
        findings: &diagnosis.findings,
        checks_run: &diagnosis.checks_run,
        checks_skipped: &diagnosis.checks_skipped,
        checks_partial: &diagnosis.checks_partial,
        checks_incomplete: crate::doctor_text::incomplete(diagnosis).into_iter().collect(),
        unread,
        worst: diagnosis.worst().map(|s| s.as_str()),
        topology,
        measurements: measurements.map(crate::mem_json::document),
    }
}
