//! The `numasleuth.c2c/1` document: analyze's `C2cDocument` under its
//! schema.
//!
//! Schema (fields may be added, these stay): `schema`, `cpus`, `home_node`,
//! `latency_ns`: a square matrix indexed like `cpus`, with null on the
//! diagonal and for pairs not measured, otherwise `{median, p10, p90,
//! samples}` in ns per one-way transfer of the line. Pairs are measured
//! once and mirrored, so the matrix is symmetric. `suspected_siblings`
//! lists pairs far faster than the other pairs of their kind that the
//! kernel declares separate cores (`cpus`, `latency_ns`, `median_ns`,
//! `kind`, `message`).

use numasleuth_analyze::c2c_document::C2cDocument;

use crate::schema::Schema;

pub const SCHEMA: &str = "numasleuth.c2c/1";

/// The document `c2c --json` writes: analyze's `C2cDocument` under its
/// schema.
pub fn document(doc: &C2cDocument) -> Schema<'_, C2cDocument> {
    Schema::new(SCHEMA, doc)
}

#[cfg(test)]
mod tests {
    use super::*;
    use numasleuth_analyze::c2c_document::C2cMethod;
    use numasleuth_analyze::stats::Summary;

    #[test]
    fn schema_keeps_its_documented_names() {
        let s = Summary {
            median: 50.0,
            p10: 48.0,
            p90: 55.0,
            samples: 7,
        };
        let doc = C2cDocument {
            cpus: vec![0, 1],
            home_node: 0,
            method: C2cMethod::Cas,
            sampling: "all",
            latency_ns: vec![vec![None, Some(s)], vec![Some(s), None]],
            transfers_per_sample: 1000,
            timer_overhead_ns: Some(20.0),
            cycles_per_ns: None,
            cycles_note: String::new(),
            placement_verified: true,
            suspected_siblings: Vec::new(),
            warnings: Vec::new(),
            raw_latency_ns: None,
            raw_timing: None,
        };
        let json: serde_json::Value =
            serde_json::from_str(&crate::export::plain_json(&document(&doc)).unwrap()).unwrap();
        assert_eq!(json["schema"], "numasleuth.c2c/1");
        assert_eq!(json["cpus"], serde_json::json!([0, 1]));
        assert_eq!(json["home_node"], 0);
        assert!(json["latency_ns"][0][0].is_null());
        assert_eq!(
            json["latency_ns"][0][1],
            serde_json::json!({"median": 50.0, "p10": 48.0, "p90": 55.0, "samples": 7})
        );
        assert_eq!(json["latency_ns"][1][0], json["latency_ns"][0][1]);
    }
}
