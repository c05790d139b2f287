//! `move --json`, schema `numasleuth.move/1`: analyze's
//! `move_document::MoveDocument` under its schema: the plan (what is where and
//! what would move, as runs of pages) and, with `--apply`, what moved and
//! how it was verified. Addresses are hex strings. Fields may be added,
//! never renamed. Its rows are analyze's `page_move` values (`Target`,
//! `PageRun`, `VmaPages`).

use numasleuth_analyze::move_document::MoveDocument;

use crate::schema::Schema;

pub const SCHEMA: &str = "numasleuth.move/1";

pub fn document(doc: &MoveDocument) -> Schema<'_, MoveDocument> {
    Schema::new(SCHEMA, doc)
}
