//! `pmu diff`'s document, as `numasleuth.pmu_diff/1` writes it (report puts
//! the schema over it): the comparison with the two runs it compared.

use serde::ser::SerializeStruct;
use serde::{Serialize, Serializer};

use super::diff::PmuDiff;

/// One run compared: the file it was read from, and how long it ran.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ComparedRun {
    pub file: String,
    pub duration_s: f64,
}

#[derive(Debug, Clone, PartialEq)]
pub struct DiffDocument {
    /// A is the good run, B the bad one.
    pub a: ComparedRun,
    pub b: ComparedRun,
    pub diff: PmuDiff,
}

/// By hand because the two runs sit between the comparison's settings and
/// its rows.
impl Serialize for DiffDocument {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let d = &self.diff;
        let mut doc = serializer.serialize_struct("DiffDocument", 9)?;
        doc.serialize_field("per", &d.per)?;
        doc.serialize_field("min_count", &d.min_count)?;
        doc.serialize_field("a", &self.a)?;
        doc.serialize_field("b", &self.b)?;
        doc.serialize_field("rows", &d.rows)?;
        doc.serialize_field("only_in_a", &d.only_in_a)?;
        doc.serialize_field("only_in_b", &d.only_in_b)?;
        doc.serialize_field("both_zero", &d.both_zero)?;
        doc.serialize_field("too_few", &d.too_few)?;
        doc.end()
    }
}
