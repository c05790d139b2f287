//! Honest results when some inputs exist but cannot be read (issue 9).
//!
//! Root reads through `chmod 000`, so these trees make a file unreadable in
//! a way root cannot get around either: a directory where the file belongs
//! (EISDIR), or contents that do not parse. Absent files are a different
//! case (the kernel has no such thing) and stay answers, not gaps.

use crate::common;

use std::path::Path;

use common::*;
use serde_json::Value;

/// Replaces the file at `path` with a directory of the same name.
fn make_unreadable(root: &Path, path: &str) {
    let at = root.join(path);
    std::fs::remove_file(&at).unwrap_or_else(|e| panic!("{path}: {e}"));
    std::fs::create_dir(&at).unwrap();
}

fn doctor(root: &Path, extra: &[&str]) -> (Option<i32>, Value, String) {
    common::doctor_json_and_stderr(root, extra)
}

fn ids(value: &Value) -> Vec<String> {
    value
        .as_array()
        .unwrap()
        .iter()
        .map(|v| {
            v.as_str()
                .map_or_else(|| v["id"].as_str().unwrap().to_string(), String::from)
        })
        .collect()
}

#[test]
fn an_unreadable_irq_affinity_makes_irq_off_node_partial_not_clean() {
    let dir = host_tree_with(&[]);
    make_unreadable(dir.path(), "proc/irq/40/smp_affinity_list");
    let (code, json, _) = doctor(dir.path(), &[]);
    assert_eq!(
        code,
        Some(0),
        "without --fail-on, partial checks are reported, not failed"
    );
    assert!(ids(&json["checks_run"]).contains(&"irq-off-node".to_string()));
    let partial = &json["checks_partial"];
    assert_eq!(ids(partial), ["irq-off-node"], "{partial:#}");
    assert_eq!(partial[0]["unread"][0]["path"], "/proc/irq/40/smp_affinity_list");
    assert!(
        partial[0]["unread"][0]["why"].as_str().unwrap().contains("directory"),
        "{partial:#}"
    );
    assert_eq!(ids(&json["checks_incomplete"]), ["irq-off-node"]);
    assert_eq!(json["unread"][0]["path"], "/proc/irq/40/smp_affinity_list");

    // --fail-on warning cannot pass: irq-off-node raises warnings and did
    // not see all its input. --fail-on critical can: it never raises those.
    let (code, _, err) = doctor(dir.path(), &["--fail-on", "warning"]);
    assert_eq!(code, Some(1), "{err}");
    assert!(
        err.contains("could not read all their inputs: irq-off-node (exit 1)"),
        "{err}"
    );
    assert_eq!(doctor(dir.path(), &["--fail-on", "critical"]).0, Some(0));

    let text = numasleuth()
        .arg("--root")
        .arg(dir.path())
        .arg("doctor")
        .output()
        .unwrap();
    let out = String::from_utf8_lossy(&text.stdout);
    assert!(!out.contains("every check that ran is clean"), "{out}");
    assert!(
        out.contains("1 check could not read all their inputs: irq-off-node"),
        "{out}"
    );
    assert!(
        out.contains("partial irq-off-node: could not read /proc/irq/40/smp_affinity_list: "),
        "{out}"
    );

    let html = doctor_html(dir.path());
    assert!(html.contains("partial check") && html.contains("/proc/irq/40/smp_affinity_list"));
    assert!(!html.contains("every check that ran is clean"));
}

#[test]
fn what_can_be_read_still_counts() {
    // The affinity list cannot be read, but the effective set says IRQ 40
    // is served by CPU 0, off the NIC's node 1: the finding stands, and
    // the check is still partial.
    let dir = host_tree_with(&[("proc/irq/40/effective_affinity_list", Some("0\n"))]);
    make_unreadable(dir.path(), "proc/irq/40/smp_affinity_list");
    let (code, json, _) = doctor(dir.path(), &["--fail-on", "warning"]);
    assert_eq!(code, Some(1));
    assert!(ids(&json["findings"]).contains(&"irq-off-node".to_string()));
    assert_eq!(ids(&json["checks_partial"]), ["irq-off-node"]);
}

/// Each file a check depends on, made unreadable, leaves that check
/// partial or skipped as unreadable, never clean; the run itself goes on.
#[test]
fn every_check_says_when_its_input_was_unreadable() {
    let cases = [
        ("sys/devices/system/node/node1/cpulist", "cpu-less-nodes"),
        ("sys/devices/system/cpu/online", "offline-cpus"),
        (
            "sys/devices/system/cpu/cpu2/topology/physical_package_id",
            "nodes-per-package",
        ),
        ("proc/cmdline", "numa-disabled"),
        ("proc/self/status", "cgroup-restricted"),
        ("proc/sys/kernel/numa_balancing", "numa-balancing"),
        ("proc/sys/vm/zone_reclaim_mode", "zone-reclaim-mode"),
        ("sys/kernel/mm/transparent_hugepage/defrag", "transparent-hugepages"),
        ("proc/sys/vm/min_free_kbytes", "min-free-kbytes"),
        ("proc/zoneinfo", "zone-watermark-pressure"),
        ("sys/devices/system/node/node1/meminfo", "free-memory-imbalance"),
        ("proc/interrupts", "irq-off-node"),
        ("proc/irq/40/effective_affinity_list", "irq-off-node"),
        (
            "sys/devices/pci0000:10/0000:10:00.0/0000:11:01.0/numa_node",
            "irq-off-node",
        ),
        ("proc/1/comm", "irqbalance-running"),
    ];
    for (path, check) in cases {
        let dir = host_tree_with(&[]);
        make_unreadable(dir.path(), path);
        let (code, json, err) = doctor(dir.path(), &["--fail-on", "info"]);
        let incomplete = ids(&json["checks_incomplete"]);
        assert!(
            incomplete.contains(&check.to_string()),
            "{path}: {check} not incomplete: {json:#}"
        );
        let shown = format!("/{path}");
        assert!(
            // The comm files of many processes are one entry, naming one.
            json["unread"]
                .as_array()
                .unwrap()
                .iter()
                .any(|u| u["path"] == shown.as_str() || u["why"].as_str().unwrap().contains(&shown)),
            "{path} not in unread: {}",
            json["unread"]
        );
        assert_eq!(code, Some(1), "{path}: --fail-on info passed: {err}");
        // Every other check still ran or was skipped with a reason.
        let accounted = ids(&json["checks_run"]).len() + ids(&json["checks_skipped"]).len();
        assert_eq!(accounted, 16, "{path}: {json:#}");
    }
}

#[test]
fn absent_knobs_are_answers_not_gaps() {
    // A kernel without THP or NUMA balancing: nothing to find there.
    let dir = host_tree_with(&[
        ("sys/kernel/mm/transparent_hugepage/enabled", None),
        ("sys/kernel/mm/transparent_hugepage/defrag", None),
        ("proc/sys/kernel/numa_balancing", None),
    ]);
    let (code, json, err) = doctor(dir.path(), &["--fail-on", "info"]);
    assert_eq!(code, Some(0), "{err}");
    assert!(json["checks_incomplete"].as_array().unwrap().is_empty(), "{json:#}");
    assert!(json["unread"].as_array().unwrap().is_empty());
    let skipped = &json["checks_skipped"];
    let thp = skipped
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["id"] == "transparent-hugepages")
        .unwrap();
    assert_eq!(thp["unreadable"], false);
}

fn is_root() -> bool {
    std::fs::read_to_string("/proc/self/status")
        .unwrap()
        .lines()
        .any(|l| l.starts_with("Uid:") && l.split_whitespace().nth(1) == Some("0"))
}

/// `doctor --pid` of a process whose memory map this user may not read:
/// the placement check is skipped as unreadable, and `--fail-on` cannot
/// pass on it. Run as `nobody` against a root process when the test is
/// root, else against init, which is always root's.
#[test]
fn a_process_that_cannot_be_read_is_an_incomplete_check() {
    let sleeper = std::process::Command::new("sleep").arg("30").spawn().unwrap();
    let bin = assert_cmd::cargo::cargo_bin("numasleuth");
    let (mut command, pid) = if is_root() {
        let mut c = std::process::Command::new("setpriv");
        c.args(["--reuid=65534", "--regid=65534", "--clear-groups"]).arg(bin);
        (c, sleeper.id().to_string())
    } else {
        (std::process::Command::new(bin), "1".to_string())
    };
    let output = command
        .args(["doctor", "--json", "--fail-on", "critical", "--pid", &pid])
        .output()
        .expect("setpriv runs the check as nobody");
    let mut sleeper = sleeper;
    let _ = sleeper.kill();
    let _ = sleeper.wait();
    let json: Value = serde_json::from_slice(&output.stdout).unwrap_or_else(|e| panic!("{e}: {}", stderr(&output)));
    let skipped = json["checks_skipped"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["id"] == "process-placement")
        .unwrap_or_else(|| panic!("{json:#}"));
    assert_eq!(skipped["unreadable"], true, "{skipped}");
    assert!(
        skipped["why"].as_str().unwrap().contains("permission denied"),
        "{skipped}"
    );
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
}
