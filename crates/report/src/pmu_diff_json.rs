//! `pmu diff --json`, schema `numasleuth.pmu_diff/1`: analyze's
//! `DiffDocument` under its schema.
//!
//! Kept names: `schema`, `per` (`second`, `op`, or the event a run was
//! divided by), `a` and `b` (`file`, `duration_s`), `rows[]` ranked by
//! |ln ratio| (`name`, `pmu`, `a`, `b` normalised, `ratio` = b / a or null
//! when a is 0, `log_ratio`, `zero_in` `a`/`b`/null), `only_in_a`,
//! `only_in_b`, `both_zero`, `too_few` (below `min_count` in both runs).
//! Fields may be added, never renamed.

use numasleuth_analyze::pmu::diff_document::DiffDocument;

use crate::schema::Schema;

pub const SCHEMA: &str = "numasleuth.pmu_diff/1";

pub fn document(doc: &DiffDocument) -> Schema<'_, DiffDocument> {
    Schema::new(SCHEMA, doc)
}
