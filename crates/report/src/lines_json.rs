//! `lines --json`, schema `numasleuth.lines/1`: analyze's
//! `lines::LinesDocument` under its schema.
//!
//! Kept names: `schema`, `line_size`, `lines[]` with `address` (hex
//! string) and `symbols[]` (`name`, `size`, `section`). Fields may be
//! added, never renamed. Addresses are run-time ones when `pid` is set.

use numasleuth_analyze::lines::LinesDocument;

use crate::schema::Schema;

pub const SCHEMA: &str = "numasleuth.lines/1";

pub fn document(doc: &LinesDocument) -> Schema<'_, LinesDocument> {
    Schema::new(SCHEMA, doc)
}
