//! `hotlines --json`, schema `numasleuth.hotlines/1`: analyze's
//! `hotlines::document::HotlinesDocument` under its schema.
//!
//! Kept names: `method` (`ip-decode`, `precise:cpu/mem-loads`,
//! `precise:ibs_op`), `samples`, `unknown_share`,
//! `lines[]` with `address` (hex string), `symbols`, `samples`, `writes`,
//! `reads`, `threads`, `nodes`. Every line is a whole record. Fields may be
//! added, never renamed.

pub use numasleuth_analyze::hotlines::document::HotlinesDocument;
pub use numasleuth_analyze::hotlines::NamedLine;

use crate::schema::Schema;

pub const SCHEMA: &str = "numasleuth.hotlines/1";

pub fn document(doc: &HotlinesDocument) -> Schema<'_, HotlinesDocument> {
    Schema::new(SCHEMA, doc)
}
