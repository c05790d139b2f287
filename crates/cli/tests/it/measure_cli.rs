//! `mem` and `c2c` end to end on this machine, with tiny buffers and few
//! samples so they run in seconds. They assert structure, placement and
//! clear errors, never timings (a benchmark is not a test).

use crate::common;

use common::{json, output};
use serde_json::Value;

fn error(args: &[&str]) -> String {
    let stderr = common::exit_2_stderr(args);
    assert!(stderr.starts_with("numasleuth: error: "), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    stderr
}

/// Nodes with memory, as the kernel lists them (node 0 without NUMA).
fn memory_nodes() -> Vec<u64> {
    let text = std::fs::read_to_string("/sys/devices/system/node/has_memory").unwrap_or_else(|_| "0".into());
    let mut nodes = Vec::new();
    for part in text.trim().split(',') {
        let (a, b) = part.split_once('-').unwrap_or((part, part));
        nodes.extend(a.parse::<u64>().unwrap()..=b.parse::<u64>().unwrap());
    }
    nodes
}

const FAST: [&str; 4] = ["--samples", "2", "--sample-ms", "1"];

fn with_fast<'a>(args: &[&'a str]) -> Vec<&'a str> {
    args.iter().copied().chain(FAST).collect()
}

fn assert_cell(cell: &Value) {
    for key in ["median", "p10", "p90"] {
        assert!(cell[key].as_f64().is_some(), "{cell}");
    }
    assert_eq!(cell["samples"], 2, "{cell}");
}

#[test]
fn mem_latency_fills_only_its_key_with_a_verified_matrix() {
    let doc = json(&with_fast(&["mem", "latency", "--json", "--size", "1M"]));
    assert_eq!(doc["schema"], "numasleuth.mem/2");
    assert!(doc["bandwidth_bytes_per_sec"].is_null());
    let latency = &doc["latency_ns"];
    let nodes: Vec<u64> = latency["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n.as_u64().unwrap())
        .collect();
    assert_eq!(nodes, memory_nodes());
    let matrix = latency["matrix"].as_array().unwrap();
    assert_eq!(matrix.len(), latency["initiators"].as_array().unwrap().len());
    for row in matrix {
        assert_eq!(row.as_array().unwrap().len(), nodes.len());
        row.as_array().unwrap().iter().for_each(assert_cell);
    }
    assert_eq!(doc["placement_verified"], true, "{}", doc["placements"]);
    assert!(doc["warnings"].is_array());
}

#[test]
fn mem_bandwidth_fills_only_its_key_and_names_the_mix() {
    let doc = json(&with_fast(&[
        "mem",
        "bandwidth",
        "--json",
        "--size",
        "2M",
        "--mix",
        "2:1",
    ]));
    assert!(doc["latency_ns"].is_null());
    let bandwidth = &doc["bandwidth_bytes_per_sec"];
    assert_eq!(bandwidth["mix"], "2:1");
    assert_cell(&bandwidth["matrix"][0][0]);
    assert_eq!(doc["placement_verified"], true);
}

#[test]
fn mem_runs_both_and_prints_csv_and_text() {
    let doc = json(&with_fast(&["mem", "--json", "--size", "1M", "--threads", "1"]));
    assert_cell(&doc["latency_ns"]["matrix"][0][0]);
    assert_cell(&doc["bandwidth_bytes_per_sec"]["matrix"][0][0]);
    assert_eq!(doc["bandwidth_bytes_per_sec"]["mix"], "read");

    let out = output(&with_fast(&["mem", "--csv", "--size", "1M", "--threads", "1"]));
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.starts_with("kind,initiator,target,size_bytes,delay_ns,median,p10,p90,samples,unit\n"));
    assert!(
        text.contains("\nlatency,0,0,1048576,,") && text.contains("\nbandwidth-read,0,0,"),
        "{text}"
    );

    let out = output(&with_fast(&["mem", "--size", "1M", "--threads", "1"]));
    let text = String::from_utf8(out.stdout).unwrap();
    // The provenance line, then the report.
    let (provenance, text) = crate::common::provenance_and_report(&text);
    assert!(provenance.contains("live system"), "{provenance}");
    assert!(text.starts_with("Idle latency, ns"), "{text}");
    assert!(!text.contains('\x1b'), "no colour into a pipe");
    assert!(text.contains("Placement verified"), "{text}");
}

#[test]
fn latency_sweep_has_a_point_per_size() {
    let doc = json(&with_fast(&["mem", "latency", "--sizes", "16K..64K", "--json"]));
    let points = doc["latency_sweep"]["points"].as_array().unwrap();
    let sizes: Vec<u64> = points.iter().map(|p| p["size_bytes"].as_u64().unwrap()).collect();
    assert_eq!(sizes, [16384, 32768, 65536]);
    points.iter().for_each(|p| assert_cell(&p["latency_ns"]));
    assert!(doc["latency_ns"].is_null());
}

#[test]
fn loaded_latency_has_a_row_per_delay_or_says_why_not() {
    let out = output(&with_fast(&[
        "mem", "loaded", "--json", "--size", "2M", "--delays", "0,2000",
    ]));
    assert!(
        out.status.success(),
        "loaded latency needs two allowed CPUs, as every test machine has: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    let points = doc["loaded_latency"]["points"].as_array().unwrap();
    assert_eq!(
        points
            .iter()
            .map(|p| p["delay_ns"].as_u64().unwrap())
            .collect::<Vec<_>>(),
        [0, 2000]
    );
    points.iter().for_each(|p| {
        assert_cell(&p["latency_ns"]);
        assert_cell(&p["bandwidth_bytes_per_sec"]);
    });
    assert_eq!(doc["placement_verified"], true);
}

#[test]
fn c2c_matrix_is_symmetric_with_an_empty_diagonal() {
    let out = output(&["c2c", "--json", "--samples", "2", "--transfers", "50"]);
    assert!(
        out.status.success(),
        "c2c needs two allowed CPUs, as every test machine has: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["schema"], "numasleuth.c2c/1");
    assert_eq!(doc["home_node"], 0);
    let n = doc["cpus"].as_array().unwrap().len();
    let matrix = doc["latency_ns"].as_array().unwrap();
    assert_eq!(matrix.len(), n);
    for (i, row) in matrix.iter().enumerate() {
        let row = row.as_array().unwrap();
        assert_eq!(row.len(), n);
        for (j, cell) in row.iter().enumerate() {
            if i == j {
                assert!(cell.is_null());
            } else {
                assert_cell(cell);
                assert_eq!(cell, &matrix[j][i]);
            }
        }
    }
    assert_eq!(doc["placement_verified"], true);
    let one_way = json(&[
        "c2c",
        "--json",
        "--method",
        "one-way",
        "--samples",
        "2",
        "--transfers",
        "20",
        "--cpus",
        "0-1",
    ]);
    assert_eq!(one_way["method"], "one-way");
    assert!(doc.get("raw_latency_ns").is_none(), "raw samples only on request");
    let raw = json(&[
        "c2c",
        "--json",
        "--raw",
        "--samples",
        "3",
        "--transfers",
        "20",
        "--cpus",
        "0-1",
    ]);
    assert_eq!(raw["raw_latency_ns"][0][1].as_array().unwrap().len(), 3);
    assert!(raw["raw_latency_ns"][0][0].is_null());
}

#[test]
fn clear_errors_for_impossible_requests() {
    assert!(error(&["mem", "--nodes", "7"]).contains("node 7 does not exist"));
    assert!(error(&["mem", "latency", "--sizes", "16K", "--cpu", "4095"]).contains("CPU 4095 is outside the CPUs"));
    assert!(error(&["mem", "latency", "--sizes", "16K", "--node", "9"]).contains("node 9 does not exist"));
    assert!(error(&["mem", "latency", "--size", "8T"]).contains("more than its"));
    assert!(error(&["mem", "latency", "--size", "900T"]).contains("a buffer is 4K to 16T"));
    assert!(error(&["c2c", "--cpus", "4095"]).contains("CPU 4095 is outside"));
    assert!(error(&["c2c", "--home-node", "9"]).contains("node 9 does not exist"));
    // One CPU left is "1 (CPU 0)", never "leaves 0".
    let one = error(&["c2c", "-C", "0"]);
    assert!(
        one.contains("needs at least two CPUs, and the selection leaves 1 (CPU 0)"),
        "{one}"
    );
    let capture = tempfile::tempdir().unwrap();
    std::fs::create_dir(capture.path().join("proc")).unwrap();
    let root = capture.path().to_str().unwrap();
    assert!(error(&["mem", "--root", root]).contains("measures this machine, so it cannot run on --root"));
}

#[test]
fn hugetlb_without_reserved_pages_is_a_clear_error() {
    let reserved = std::fs::read_to_string("/proc/sys/vm/nr_hugepages").unwrap_or_default();
    assert_eq!(
        reserved.trim(),
        "0",
        "this test checks the error for a machine without reserved hugetlb pages"
    );
    let stderr = error(&with_fast(&[
        "mem", "latency", "--json", "--size", "2M", "--pages", "huge",
    ]));
    assert!(stderr.contains("no huge pages available"), "{stderr}");
    assert!(stderr.contains("nr_hugepages"), "{stderr}");
}

#[test]
fn c2c_sampling_modes_pick_one_cpu_per_group_or_say_why_not() {
    for (mode, name) in [("core", "core"), ("cache", "cache"), ("node", "node")] {
        let out = output(&["c2c", "--json", "--sample", mode, "--samples", "2", "--transfers", "20"]);
        if out.status.success() {
            let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
            assert_eq!(doc["sampling"], name);
            let cpus = doc["cpus"].as_array().unwrap();
            assert!(cpus.len() >= 2 && doc["latency_ns"].as_array().unwrap().len() == cpus.len());
        } else {
            // One node, or one L3 shared by every CPU, leaves a single CPU.
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert!(stderr.contains("needs at least two CPUs"), "{mode}: {stderr}");
        }
    }
}
