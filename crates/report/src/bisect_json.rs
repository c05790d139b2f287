//! `bisect --json`, schema `numasleuth.bisect/1`: analyze's
//! `bisect::document::BisectDocument` under its schema: the candidate pages, the
//! baseline, every step (which pages moved, the readings, the change), the
//! culprit page(s) with the symbols on them, and whether every page went
//! back where it was. Addresses are hex strings. Fields may be added,
//! never renamed.

use numasleuth_analyze::bisect::document::BisectDocument;

use crate::schema::Schema;

pub const SCHEMA: &str = "numasleuth.bisect/1";

pub fn document(doc: &BisectDocument) -> Schema<'_, BisectDocument> {
    Schema::new(SCHEMA, doc)
}
