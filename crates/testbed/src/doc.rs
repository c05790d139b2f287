//! Reading the guests' `--json` documents, shared by the guest tests so
//! each asks the same question the same way.

use std::collections::BTreeMap;

use serde_json::Value;

use crate::check::Checks;

/// `v[key]` as a slice; empty when absent or not an array (the check that
/// needs it then fails on what it does not find).
pub fn array<'a>(v: &'a Value, key: &str) -> &'a [Value] {
    v.get(key).and_then(Value::as_array).map_or(&[], Vec::as_slice)
}

/// The ids of a doctor or inspect document's findings, in their rank.
pub fn finding_ids(doc: &Value) -> Vec<&str> {
    array(doc, "findings").iter().filter_map(|f| f["id"].as_str()).collect()
}

/// The finding with this id in a doctor or inspect document.
pub fn finding<'a>(doc: &'a Value, id: &str) -> Option<&'a Value> {
    array(doc, "findings").iter().find(|f| f["id"] == id)
}

/// Pages of the guest victim's .bss (`/victim`) per node from `inspect
/// --json`, summed over its mappings from `counts` (`pages_by_node`, or
/// `counted_pages_by_node` for each page once), and how many of them are
/// between hinting faults.
pub fn victim_bss(inspect: &Value, counts: &str) -> (BTreeMap<String, u64>, u64) {
    let mut nodes = BTreeMap::new();
    let mut hinting = 0;
    for m in array(inspect, "mappings") {
        if m["section"] == ".bss" && m["object"] == "/victim" {
            for (node, pages) in m[counts].as_object().into_iter().flatten() {
                *nodes.entry(node.clone()).or_insert(0) += pages.as_u64().unwrap_or(0);
            }
            hinting += m["hinting_fault_pages"].as_u64().unwrap_or(0);
        }
    }
    (nodes, hinting)
}

/// `move --apply`'s two verifications: every page attempted is on the
/// target afterwards (move_pages), and numa_maps agrees.
pub fn expect_move_verified(c: &mut Checks, applied: &Value) {
    c.eq(
        "move --apply verified all",
        applied["verified"].clone(),
        applied["attempted"].clone(),
    );
    c.eq(
        "move --apply numa_maps agrees",
        applied["numa_maps_agrees"].as_bool(),
        Some(true),
    );
}

/// The database incident named first, by one finding: `hot-remote-global`
/// on `nil_root`, its page on `page_node`, written from `user_node`, and
/// citing nothing it does not explain.
pub fn expect_hot_remote_global_first(c: &mut Checks, doctor: &Value, what: &str, (page_node, user_node): (u64, u64)) {
    let findings = array(doctor, "findings");
    let ids = finding_ids(doctor);
    let Some(first) = findings.first() else {
        return c.fail(format!("{what}: no finding at all"));
    };
    c.eq(
        &format!("{what}: first finding"),
        first["id"].as_str(),
        Some("hot-remote-global"),
    );
    let title = first["title"].as_str().unwrap_or("");
    let want = format!("is on node {page_node}, and threads on node {user_node} write it");
    c.check(title.contains("nil_root") && title.contains(&want), || {
        format!("{what}: first finding's title {title:?} (want nil_root and {want:?}); findings {ids:?}")
    });
    let page = array(first, "evidence")
        .iter()
        .find_map(|e| e["values"]["page_node"].as_u64());
    c.eq(&format!("{what}: hot-remote-global page_node"), page, Some(page_node));
}
