//! `watch --json`, schema `numasleuth.watch/1`.
//!
//! Kept names: `schema`, `pid`, `address` (hex string), `symbol`,
//! `duration_s`, `writes_total`, `writes_per_sec`, `writers[]` with
//! `function`, `file`, `line`, `samples`. Fields may be added, never
//! renamed. With `--rw`, `access` is `read-write` and "writes" count every
//! access.

use numasleuth_analyze::watch::WatchSummary;

use crate::schema::Schema;

pub const SCHEMA: &str = "numasleuth.watch/1";

/// The document: analyze's summary, which serializes as the schema above
/// (addresses as hex strings), after the schema.
pub fn build(s: &WatchSummary) -> Schema<'_, WatchSummary> {
    Schema::new(SCHEMA, s)
}
