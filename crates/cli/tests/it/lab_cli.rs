//! `lab` end to end on this machine with tiny runs (2 ms samples), so the
//! three experiments finish in seconds. They pin the JSON schemas by
//! parsing real output, check the workloads' own correctness flags and
//! the refusals; they never assert timings (a benchmark is not a test).

use crate::common;

use common::output;
use serde_json::Value;

const TINY: [&str; 4] = ["--samples", "2", "--sample-ms", "2"];

fn json(args: &[&str]) -> Value {
    let all: Vec<&str> = args.iter().copied().chain(TINY).chain(["--json"]).collect();
    common::json(&all)
}

fn error(args: &[&str]) -> String {
    let stderr = common::exit_2_stderr(args);
    assert!(!stderr.contains("panicked"), "{stderr}");
    stderr
}

/// CPUs this process may use (the affinity mask, as the tool sees it).
fn allowed_cpus() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

fn assert_summary(cell: &Value, samples: u64) {
    for key in ["median", "p10", "p90"] {
        assert!(cell[key].as_f64().is_some_and(|v| v >= 0.0), "{cell}");
    }
    assert_eq!(cell["samples"], samples, "{cell}");
}

/// Every result's raw samples: one per kept sample, one count per thread.
fn assert_raw(row: &Value) {
    let threads = row["threads"].as_u64().unwrap() as usize;
    let raw = row["raw"].as_array().unwrap();
    assert_eq!(raw.len(), 2, "{row}");
    for sample in raw {
        assert!(sample["span_ns"].as_u64().unwrap() > 0);
        assert_eq!(sample["ops_per_thread"].as_array().unwrap().len(), threads);
    }
}

#[test]
fn false_sharing_schema_and_counters_that_sum() {
    let doc = json(&[
        "lab",
        "false-sharing",
        "--thread-sweep",
        "1,2",
        "--placement",
        "compact",
    ]);
    assert_eq!(doc["schema"], "numasleuth.lab.false_sharing/1");
    let results = doc["results"].as_array().unwrap();
    assert_eq!(results.len(), 2 * 2 * 2, "ops × layouts × thread counts");
    for row in results {
        assert!(["packed", "padded"].contains(&row["layout"].as_str().unwrap()), "{row}");
        assert!(["atomic", "store"].contains(&row["op"].as_str().unwrap()), "{row}");
        assert_eq!(row["placement"], "compact");
        assert!([1, 2].contains(&row["threads"].as_u64().unwrap()));
        assert_summary(&row["ops_per_sec"], 2);
        assert_summary(&row["ms_per_10m_ops_per_thread"], 2);
        assert_eq!(row["counts_verified"], true);
        assert_raw(row);
        // Packed rows compare with padded ones (at 1 thread: the control).
        assert_eq!(
            row["slowdown_vs_padded"].is_object(),
            row["layout"] == "packed",
            "{row}"
        );
        assert_eq!(row["slowdown_vs_1_thread"].is_object(), row["threads"] == 2, "{row}");
    }
    assert_eq!(doc["placement_verified"], true);
    assert!(!doc["meaning"].as_array().unwrap().is_empty());
    assert!(doc["warnings"].is_array());
    assert_eq!(doc["run"]["samples_per_config"], 2);
}

#[test]
fn locks_schema_and_every_lock_counts_exactly() {
    let doc = json(&["lab", "locks", "--threads", "2"]);
    assert_eq!(doc["schema"], "numasleuth.lab.locks/1");
    let results = doc["results"].as_array().unwrap();
    assert_eq!(results.len(), 4 * 2, "locks × loads");
    for row in results {
        let lock = row["lock"].as_str().unwrap();
        let load = row["load"].as_str().unwrap();
        assert!(["ticket", "mcs", "mutex", "atomic"].contains(&lock), "{row}");
        assert!(["empty", "one-load"].contains(&load), "{row}");
        assert_eq!(row["threads"], 2);
        assert!(row["placement"].is_string());
        assert_summary(&row["ops_per_sec"], 2);
        assert_raw(row);
        // The one-load word and the bare atomic count every pair.
        if load == "one-load" || lock == "atomic" {
            assert_eq!(row["count_verified"], true, "{row}");
        }
    }
}

#[test]
fn remote_global_schema_and_the_single_node_case() {
    let doc = json(&["lab", "remote-global", "--thread-sweep", "1,2"]);
    assert_eq!(doc["schema"], "numasleuth.lab.remote_global/1");
    assert_eq!(doc["writes_per_op"], 3);
    let results = doc["results"].as_array().unwrap();
    for row in results {
        assert!(["local", "remote", "per-thread"].contains(&row["global"].as_str().unwrap()));
        assert_summary(&row["ops_per_sec"], 2);
        assert_raw(row);
    }
    let globals: Vec<&str> = results.iter().map(|r| r["global"].as_str().unwrap()).collect();
    assert!(globals.contains(&"local") && globals.contains(&"per-thread"));
    let warnings = doc["warnings"].as_array().unwrap();
    if doc["remote_node"].is_null() {
        assert!(doc["ns_per_invalidation"].is_null());
        assert!(!globals.contains(&"remote"));
        assert!(warnings
            .iter()
            .any(|w| w.as_str().unwrap().contains("remote placement was skipped")));
        let meaning = doc["meaning"][0].as_str().unwrap();
        assert!(meaning.contains("cannot be shown"), "{meaning}");
    } else {
        assert!(globals.contains(&"remote"));
        assert!(doc["ns_per_invalidation"].is_number() || allowed_cpus() < 2);
    }
}

#[test]
fn text_output_explains_and_the_svg_is_drawn() {
    let dir = tempfile::tempdir().unwrap();
    let svg = dir.path().join("locks.svg");
    let svg_arg = svg.to_str().unwrap();
    let args = [
        "lab",
        "locks",
        "--thread-sweep",
        "1,2",
        "--locks",
        "ticket,mcs",
        "--samples",
        "2",
        "--sample-ms",
        "2",
        "--svg",
        svg_arg,
    ];
    let out = output(&args);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8(out.stdout).unwrap();
    // The provenance line, then the report.
    let (provenance, report) = crate::common::provenance_and_report(&text);
    assert!(provenance.contains("live system"), "{text}");
    assert!(report.starts_with("numasleuth lab locks: "), "{text}");
    assert!(text.contains("What this means:"), "{text}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains(&format!("numasleuth: wrote {svg_arg}")), "{stderr}");
    let drawn = std::fs::read_to_string(&svg).unwrap();
    assert!(drawn.starts_with("<svg"), "{}", &drawn[..60]);
    for label in ["ticket", "mcs", "threads", "1 load"] {
        assert!(drawn.contains(label), "{label} missing from the chart");
    }
}

#[test]
fn more_threads_than_cpus_needs_oversubscribe() {
    let too_many = (allowed_cpus() + 1).to_string();
    let stderr = error(&["lab", "locks", "--threads", &too_many]);
    assert!(stderr.starts_with("numasleuth: error: "), "{stderr}");
    assert!(stderr.contains("--oversubscribe"), "{stderr}");
    assert!(stderr.contains("more than the"), "{stderr}");
    let doc = json(&[
        "lab",
        "locks",
        "--threads",
        &too_many,
        "--oversubscribe",
        "--locks",
        "ticket,mcs",
    ]);
    assert_eq!(doc["run"]["oversubscribed"], true);
    let warnings = doc["warnings"].as_array().unwrap();
    assert!(warnings
        .iter()
        .any(|w| w.as_str().unwrap().contains("more threads than CPUs")));
}

#[test]
fn impossible_requests_are_clear_errors() {
    let stderr = error(&["lab", "remote-global", "--remote-node", "4000"]);
    assert!(stderr.contains("node 4000 does not exist"), "{stderr}");
    let stderr = error(&["lab", "remote-global", "--node", "0", "--remote-node", "0"]);
    assert!(stderr.contains("workers' own node"), "{stderr}");
    let stderr = error(&["lab", "false-sharing", "--thread-sweep", "0"]);
    assert!(stderr.contains("thread counts start at 1"), "{stderr}");
    let stderr = error(&["lab", "false-sharing", "--threads", "0"]);
    assert!(stderr.contains("is not a thread count from 1 to 4096"), "{stderr}");
    let stderr = error(&["lab", "false-sharing", "--svg", "/nonexistent-dir/x.svg"]);
    assert!(stderr.contains("/nonexistent-dir does not exist"), "{stderr}");
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("proc")).unwrap();
    let stderr = error(&["--root", dir.path().to_str().unwrap(), "lab", "locks"]);
    assert!(stderr.contains("measures this machine"), "{stderr}");
}
