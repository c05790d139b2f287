//! The `numasleuth.mem/2` document: analyze's `MemDocument` (what `mem`
//! measured, summarised, with the placement proof and warnings) under its
//! schema. Text and CSV render this same value, so every output says the
//! same thing.
//!
//! Schema (fields may be added, these stay):
//! `schema`, `latency_ns` {`nodes`, `matrix`}, `bandwidth_bytes_per_sec`
//! {`nodes`, `matrix`, `mix`}, `placement_verified`, `warnings`.
//! `matrix[i][j]` is initiator `initiators[i]` (CPUs of that node) reading
//! memory of node `nodes[j]`; cells are `{median, p10, p90, samples}` or
//! null. A key a command did not measure is null.
//!
//! Every matrix says how big its buffers were and why: `working_set_bytes`
//! (all threads' buffers together) and `sized_from` (`{"cache": "L3",
//! "bytes": …, "cpus": "0-15", "factor": 4, "count": 1}`, or null when no
//! cache size was known), with `chosen_by` (`rule`, `size`, `free-memory`,
//! `fallback`, `self-check`) and the `notes` that explain a choice below the rule. The
//! latency matrix also carries `self_check`, the chase at twice the size
//! (`flattened` false when they differ by more than 10%), or
//! `self_check_skipped` with the reason it did not run. Before the matrix,
//! the rule's size is doubled while a chase at twice it is slower by more
//! than 10% (at most 8×, within free memory): `size_search` lists each
//! comparison and `size_search_note` why it did not run or stopped early;
//! a size raised so is `chosen_by` `self-check`.
//!
//! `measured_again` lists the matrix cells whose spread did not hold the
//! first time and were measured again (`matrix`, `initiator`, `node`,
//! `times`); the matrices hold each cell's last measurement.

use numasleuth_analyze::mem_document::MemDocument;

use crate::schema::Schema;

pub const SCHEMA: &str = "numasleuth.mem/2";

/// The document `mem --json` writes, and `doctor --json` under
/// `measurements`: analyze's `MemDocument` under its schema.
pub fn document(doc: &MemDocument) -> Schema<'_, MemDocument> {
    Schema::new(SCHEMA, doc)
}

#[cfg(test)]
mod tests {
    use super::*;
    use numasleuth_analyze::mem_document::LatencyMatrix;
    use numasleuth_analyze::stats::Summary;

    fn cell(median: f64) -> Option<Summary> {
        Some(Summary {
            median,
            p10: median - 1.0,
            p90: median + 1.0,
            samples: 7,
        })
    }

    /// Pins the documented names: a consumer written against the issue's
    /// example must keep working.
    #[test]
    fn schema_keeps_its_documented_names() {
        let mut doc = MemDocument::new();
        doc.latency_ns = Some(LatencyMatrix {
            nodes: vec![0, 1, 2],
            initiators: vec![0, 1],
            cpus: vec![0, 2],
            buffer_bytes: 1 << 28,
            working_set: numasleuth_analyze::working_set::choose(None, &[], 1, Some(1 << 28)),
            self_check: None,
            self_check_skipped: None,
            size_search: Vec::new(),
            size_search_note: None,
            matrix: vec![
                vec![cell(92.1), cell(140.0), cell(200.0)],
                vec![cell(140.0), cell(92.0), cell(210.0)],
            ],
        });
        doc.placement_verified = true;
        let json: serde_json::Value =
            serde_json::from_str(&crate::export::plain_json(&document(&doc)).unwrap()).unwrap();
        assert_eq!(json["schema"], "numasleuth.mem/2");
        assert_eq!(json["latency_ns"]["nodes"], serde_json::json!([0, 1, 2]));
        let first = &json["latency_ns"]["matrix"][0][0];
        assert_eq!(first["median"], 92.1);
        assert_eq!(first["p10"], 91.1);
        assert_eq!(first["p90"], 93.1);
        assert_eq!(first["samples"], 7);
        assert_eq!(json["latency_ns"]["matrix"].as_array().unwrap().len(), 2);
        assert!(json["bandwidth_bytes_per_sec"].is_null());
        assert_eq!(json["placement_verified"], true);
        assert_eq!(json["latency_ns"]["working_set_bytes"], 1 << 28);
        assert_eq!(json["latency_ns"]["chosen_by"], "size");
        assert!(json["latency_ns"]["sized_from"].is_null());
        assert_eq!(json["warnings"], serde_json::json!([]));
    }
}
