//! `inspect --json`, schema `numasleuth.inspect/2`: analyze's
//! `process_document::InspectDocument` under its schema.
//!
//! Kept names: `schema`, `pid`, `threads[]` (`tid`, `cpu`, `node`),
//! `mappings[]` (`start`, `end` as hex strings, `kind`, `object`,
//! `section`, `pages_by_node`) and `findings[]` (`id`, `severity`,
//! `title`, `evidence`, `remedy`). Fields may be added, never renamed.
//! Byte totals carry `_bytes` in their names; `pages_by_node` counts pages
//! of `page_size_bytes`, exact per page when `accuracy` is `per-page`.

pub use numasleuth_analyze::process_document::InspectDocument;

use crate::schema::Schema;

pub const SCHEMA: &str = "numasleuth.inspect/2";

pub fn document<'a>(doc: &'a InspectDocument<'a>) -> Schema<'a, InspectDocument<'a>> {
    Schema::new(SCHEMA, doc)
}
