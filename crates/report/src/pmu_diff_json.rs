//! `pmu diff --json`, schema `numasleuth.pmu_diff/1`.
//!
//! Kept names: `schema`, `per` (`second`, `op`, or the event a run was
//! divided by), `a` and `b` (`file`, `duration_s`), `rows[]` ranked by
//! |ln ratio| (`name`, `pmu`, `a`, `b` normalised, `ratio` = b / a or null
//! when a is 0, `log_ratio`, `zero_in` `a`/`b`/null), `only_in_a`,
//! `only_in_b`, `both_zero`, `too_few` (below `min_count` in both runs).
//! Fields may be added, never renamed.

use numasleuth_analyze::pmu::diff::{DiffRow, PmuDiff};
use serde::Serialize;

pub const SCHEMA: &str = "numasleuth.pmu_diff/1";

#[derive(Debug, Serialize)]
pub struct RunJson<'a> {
    pub file: &'a str,
    pub duration_s: f64,
}

#[derive(Debug, Serialize)]
pub struct PmuDiffJson<'a> {
    pub schema: &'static str,
    pub per: &'a str,
    pub min_count: f64,
    pub a: RunJson<'a>,
    pub b: RunJson<'a>,
    pub rows: &'a [DiffRow],
    pub only_in_a: &'a [String],
    pub only_in_b: &'a [String],
    pub both_zero: &'a [String],
    pub too_few: &'a [String],
}

pub fn build<'a>(d: &'a PmuDiff, a: RunJson<'a>, b: RunJson<'a>) -> PmuDiffJson<'a> {
    PmuDiffJson {
        schema: SCHEMA,
        per: &d.per,
        min_count: d.min_count,
        a,
        b,
        rows: &d.rows,
        only_in_a: &d.only_in_a,
        only_in_b: &d.only_in_b,
        both_zero: &d.both_zero,
        too_few: &d.too_few,
    }
}
