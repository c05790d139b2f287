//! `numasleuth bisect` on this (one-node) machine: what it refuses, each
//! with one clear line and exit 2, and never a moved page. The bisection
//! itself needs two nodes: `crates/testbed/tests/bisect_guest.rs`.

use crate::common;

use std::process::{Child, Command};

use common::{exit_2_stderr, numasleuth, stderr};

struct Sleeper(Child);

impl Drop for Sleeper {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn sleeper() -> Sleeper {
    Sleeper(Command::new("sleep").arg("60").spawn().unwrap())
}

fn one_line(text: &str) {
    assert!(text.starts_with("numasleuth: error: "), "{text}");
    assert_eq!(text.lines().count(), 1, "{text}");
}

#[test]
fn one_node_has_nowhere_to_move_pages() {
    let topo = common::json(&["topo", "--json"]);
    let nodes_with_memory = topo["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|n| n["memory_total_bytes"].as_u64() != Some(0))
        .count();
    let s = sleeper();
    let pid = s.0.id().to_string();
    let out = common::output(&["bisect", &pid, "--section", ".data", "--metric-cmd", "echo 1"]);
    let err = stderr(&out);
    if nodes_with_memory == 1 {
        assert_eq!(out.status.code(), Some(2));
        one_line(&err);
        assert!(err.contains("1 node(s) with memory"), "{err}");
    } else {
        // A multi-node machine has somewhere to move them.
        assert!(!err.contains("node(s) with memory"), "{err}");
    }
}

#[test]
fn processes_that_cannot_be_bisected_are_refused() {
    let err = exit_2_stderr(&["bisect", "2", "--section", ".bss", "--metric-cmd", "echo 1"]);
    one_line(&err);
    assert!(err.contains("process 2 is a kernel thread"), "{err}");
    // PID_MAX_LIMIT: never a live process.
    let err = exit_2_stderr(&["bisect", "4194304", "--section", ".bss", "--metric-cmd", "echo 1"]);
    one_line(&err);
    assert!(err.contains("4194304"), "{err}");
}

#[test]
fn a_range_the_process_does_not_map_is_refused() {
    let s = sleeper();
    let pid = s.0.id().to_string();
    let err = exit_2_stderr(&["bisect", &pid, "--range", "0x1000-0x3000", "--metric-cmd", "echo 1"]);
    one_line(&err);
    assert!(err.contains("maps nothing in the pages asked for"), "{err}");
}

#[test]
fn a_snapshot_is_not_a_system_to_bisect() {
    let fixture = concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/fixtures/qemu-two-nodes");
    let out = numasleuth()
        .args([
            "--root",
            fixture,
            "bisect",
            "1",
            "--section",
            ".bss",
            "--metric-cmd",
            "echo 1",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    one_line(&err);
    assert!(err.contains("bisect changes the live system"), "{err}");
}

#[test]
fn the_arguments_are_checked_before_anything_runs() {
    for (args, want) in [
        (vec!["bisect", "1", "--metric-cmd", "echo 1"], "required"),
        (vec!["bisect", "1", "--section", ".bss"], "--metric-cmd"),
        (vec!["bisect", "1", "--section", ".bss", "--metric-cmd", " "], "empty"),
        (
            vec![
                "bisect",
                "1",
                "--section",
                ".bss",
                "--metric-cmd",
                "echo",
                "--min-change",
                "0%",
            ],
            "percentage",
        ),
        (
            vec![
                "bisect",
                "1",
                "--section",
                ".bss",
                "--metric-cmd",
                "echo",
                "--journal",
                "j",
            ],
            "--apply",
        ),
        (
            vec!["bisect", "1", "--range", "0x2000-0x1000", "--metric-cmd", "echo"],
            "START must be below END",
        ),
    ] {
        let err = exit_2_stderr(&args);
        assert!(
            err.starts_with("numasleuth: error: ") && err.contains(want),
            "{args:?}: {err}"
        );
    }
}
