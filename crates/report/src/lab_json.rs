//! The `numasleuth.lab.*/1` documents, one per experiment: analyze's
//! `lab::documents` under each one's schema.
//!
//! Fields may be added; these keep their names and meanings:
//! - `numasleuth.lab.false_sharing/1`: `results[]` with `layout`
//!   ("packed"/"padded"), `op` ("atomic"/"store"), `threads`, `placement`
//!   ("compact"/"spread") and `ops_per_sec` `{median, p10, p90, samples}`.
//! - `numasleuth.lab.locks/1`: `results[]` with `lock`
//!   ("ticket"/"mcs"/"mutex"/"atomic"), `load` ("empty"/"one-load"),
//!   `threads`, `placement`, `ops_per_sec` (lock/unlock pairs).
//! - `numasleuth.lab.remote_global/1`: `results[]` with `global`
//!   ("local"/"remote"/"per-thread"), `threads`, `ops_per_sec`; top-level
//!   `ns_per_invalidation` (remote, or null when it could not be measured)
//!   and `warnings`.
//!
//! Every result also carries `raw`: each kept sample's span in ns and the
//! operations each thread completed, from which every rate is computed.

use numasleuth_analyze::lab::documents::{FalseSharingDocument, LocksDocument, RemoteGlobalDocument};

use crate::schema::Documented;

pub const FALSE_SHARING_SCHEMA: &str = "numasleuth.lab.false_sharing/1";
pub const LOCKS_SCHEMA: &str = "numasleuth.lab.locks/1";
pub const REMOTE_GLOBAL_SCHEMA: &str = "numasleuth.lab.remote_global/1";

impl Documented for FalseSharingDocument {
    const SCHEMA: &'static str = FALSE_SHARING_SCHEMA;
}

impl Documented for LocksDocument {
    const SCHEMA: &'static str = LOCKS_SCHEMA;
}

impl Documented for RemoteGlobalDocument {
    const SCHEMA: &'static str = REMOTE_GLOBAL_SCHEMA;
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::Schema;
    use numasleuth_analyze::lab::documents::RunInfo;
    use numasleuth_analyze::lab::{false_sharing, Raw};

    #[test]
    fn false_sharing_keeps_its_documented_names() {
        let rows = false_sharing::rows(vec![false_sharing::Measured {
            layout: numasleuth_model::lab::Layout::Packed,
            op: numasleuth_model::lab::Op::Atomic,
            placement: numasleuth_model::lab::Placement::Compact,
            threads: 2,
            cpus: vec![0, 1],
            counts_verified: true,
            raw: vec![Raw {
                span_ns: 1000,
                ops_per_thread: vec![10, 20],
                cpu_ns_per_thread: vec![900, 1000],
            }],
        }]);
        let doc = FalseSharingDocument {
            run: RunInfo {
                cpu_model: None,
                nodes: vec![0],
                allowed_cpus: vec![0, 1],
                samples_per_config: 1,
                sample_ms: 1,
                oversubscribed: false,
            },
            results: rows,
            counters_node: 0,
            placement_verified: true,
            meaning: Vec::new(),
            warnings: Vec::new(),
        };
        let json: serde_json::Value =
            serde_json::from_str(&crate::export::plain_json(&Schema::new(FalseSharingDocument::SCHEMA, &doc)).unwrap())
                .unwrap();
        let row = &json["results"][0];
        assert_eq!(json["schema"], "numasleuth.lab.false_sharing/1");
        assert_eq!(row["layout"], "packed");
        assert_eq!(row["op"], "atomic");
        assert_eq!(row["threads"], 2);
        assert_eq!(row["placement"], "compact");
        assert_eq!(row["ops_per_sec"]["median"], 3e7);
        assert_eq!(row["ops_per_sec"]["samples"], 1);
        assert_eq!(row["raw"][0]["ops_per_thread"], serde_json::json!([10, 20]));
        assert_eq!(row["cpu_share"]["median"], 0.9);
    }
}
