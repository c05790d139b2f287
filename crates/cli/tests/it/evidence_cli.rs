//! `doctor --json` evidence is data (schema `numasleuth.doctor/2`): on every
//! fixture tree each evidence item has a sentence, a source and a `values`
//! object of numbers, and no sentence leaks Rust debug output.

use crate::common;

use std::path::PathBuf;

use common::doctor_json;
use serde_json::Value;

fn fixtures() -> Vec<PathBuf> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures");
    let mut trees: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.join("proc").is_dir() || p.join("sys").is_dir())
        .collect();
    trees.sort();
    assert!(trees.len() >= 6, "expected the fixture trees under {}", dir.display());
    trees
}

/// Rust's `{:?}` of options and vectors: `Some(3)`, `None`, `[1, 2]`.
fn debug_output(text: &str) -> Option<&'static str> {
    if text.contains("Some(") {
        return Some("Some(");
    }
    if text.split(|c: char| !c.is_alphanumeric()).any(|w| w == "None") {
        return Some("None");
    }
    let bytes = text.as_bytes();
    for (i, _) in text.match_indices('[') {
        let rest = &bytes[i + 1..];
        let digits = rest.iter().take_while(|b| b.is_ascii_digit()).count();
        if digits > 0 && rest[digits..].starts_with(b", ") {
            return Some("[n, m]");
        }
    }
    None
}

#[test]
fn the_debug_detector_detects() {
    assert_eq!(debug_output("distances [Some(30), None]"), Some("Some("));
    assert_eq!(debug_output("nodes None"), Some("None"));
    assert_eq!(debug_output("nodes [1, 2]"), Some("[n, m]"));
    assert_eq!(debug_output("nodes 1-2, [pid 3]"), None);
}

fn check_values(values: &Value, where_: &str) {
    let map = values
        .as_object()
        .unwrap_or_else(|| panic!("{where_}: values is not an object: {values}"));
    for (name, value) in map {
        let numeric = match value {
            Value::Number(_) | Value::Null => true,
            Value::Array(items) => items.iter().all(Value::is_number),
            _ => false,
        };
        assert!(
            numeric,
            "{where_}: value {name} is not a number or list of numbers: {value}"
        );
    }
}

#[test]
fn every_fixture_gives_doctor_2_with_structured_evidence() {
    let mut items = 0;
    let mut with_values = 0;
    for tree in fixtures() {
        let (_, json) = doctor_json(&tree, &[]);
        let name = tree.file_name().unwrap().to_string_lossy().to_string();
        assert_eq!(json["schema"], "numasleuth.doctor/2", "{name}");
        for finding in json["findings"].as_array().unwrap() {
            let id = finding["id"].as_str().unwrap();
            let evidence = finding["evidence"].as_array().unwrap();
            assert!(!evidence.is_empty(), "{name}/{id}: no evidence");
            for item in evidence {
                let where_ = format!("{name}/{id}");
                let text = item["text"]
                    .as_str()
                    .unwrap_or_else(|| panic!("{where_}: no text: {item}"));
                assert!(!text.trim().is_empty(), "{where_}: empty text");
                assert!(
                    item["source"].as_str().is_some_and(|s| !s.is_empty()),
                    "{where_}: no source: {item}"
                );
                if let Some(leak) = debug_output(text) {
                    panic!("{where_}: debug output {leak} in {text:?}");
                }
                check_values(&item["values"], &where_);
                items += 1;
                with_values += usize::from(!item["values"].as_object().unwrap().is_empty());
            }
        }
    }
    // The fixtures raise findings, and most evidence carries numbers.
    assert!(items > 0, "no evidence at all on the fixtures");
    assert!(with_values * 2 > items, "{with_values} of {items} items carry values");
}

#[test]
fn the_zone_reclaim_incident_carries_its_watermarks_as_numbers() {
    let tree = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/zone-reclaim-incident");
    let (_, json) = doctor_json(&tree, &[]);
    let finding = json["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["id"] == "zone-watermark-pressure")
        .unwrap_or_else(|| panic!("no watermark finding: {json:#}"));
    let item = &finding["evidence"][0];
    assert_eq!(item["source"], "/proc/zoneinfo");
    // The fixture's node 1 Normal zone (tests/fixtures/zone-reclaim-incident/proc/zoneinfo).
    let v = &item["values"];
    assert_eq!(
        (v["node"].as_u64(), v["free_pages"].as_u64(), v["low_pages"].as_u64()),
        (Some(1), Some(174188), Some(163915)),
        "{item}"
    );
    assert_eq!(
        (v["min_pages"].as_u64(), v["high_pages"].as_u64()),
        (Some(131132), Some(196698))
    );
    let headroom = &finding["evidence"][1]["values"];
    assert_eq!(headroom["headroom_over_low_pages"].as_i64(), Some(174188 - 163915));
}
