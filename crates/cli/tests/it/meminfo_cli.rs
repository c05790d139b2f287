//! `meminfo` against `numastat -m` (Debian's numactl) on this machine, and
//! on snapshots: `-N`, JSON, and a kernel without per-node meminfo.
//!
//! Memory moves between two reads (the page cache grows, free memory
//! shrinks, every process started adds kernel stacks and page tables), so
//! the comparison reads numastat, then meminfo, then numastat again, and
//! holds meminfo to 1% only on the rows numastat saw hold still (within
//! 0.5%) across the two reads; the rest moved while we looked and prove
//! nothing either way. numastat prints two decimals, so a row near zero
//! may also differ by its rounding (0.01 MiB).
//!
//! Each reader also counts itself: while numasleuth reads, its own resident
//! pages are in Mapped, FilePages and AnonPages, where numastat's are not.
//! So on the rows that count user memory the comparison also allows the
//! larger of the two readers' peak resident sizes, measured by `wait4` for
//! the very runs that read the numbers; kernel rows (Slab, KernelStack,
//! PageTables, huge pages, …) get no such allowance.
//!
//! This machine is shared with builds that start and end processes all
//! the time, so one sandwich can still catch a process in the middle; a
//! row is judged only when it held still in at least two sandwiches, and
//! fails when it matched in none of them: a wrong unit, row or node sum
//! misses every time, noise does not.

use std::collections::BTreeMap;
use std::process::Command;

use crate::common::{json, numasleuth, stderr, two_node_files, write_tree};

/// Sandwiches taken at least.
const ROUNDS: usize = 8;
/// ... and at most: on a busy host (the other tests allocate beside this
/// one) a row may move in every one of the first eight, so more are taken
/// until every row in [`MUST_COMPARE`] was compared.
const MAX_ROUNDS: usize = 40;
/// Rows the test fails without having compared.
const MUST_COMPARE: [&str; 6] = [
    "MemTotal",
    "HugePages_Total",
    "Slab",
    "KernelStack",
    "FilePages",
    "AnonPages",
];

/// Rows where the reading process's own memory shows.
const USER_MEMORY_ROWS: &[&str] = &[
    "MemFree",
    "MemUsed",
    "Active",
    "Inactive",
    "Active(anon)",
    "Inactive(anon)",
    "Active(file)",
    "Inactive(file)",
    "FilePages",
    "Mapped",
    "AnonPages",
];

/// The command's stdout and its peak resident size in MiB (`wait4`).
// The child is reaped by wait4 below, which also gives its rusage.
#[allow(clippy::zombie_processes)]
fn run_measured(command: &mut Command) -> (String, f64) {
    use std::os::unix::process::ExitStatusExt;
    let child = command
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot run {command:?} ({e}); numastat comes with Debian's numactl package"));
    let pid = child.id() as libc::pid_t;
    let mut status = 0;
    // SAFETY: rusage is plain old data that wait4 fills in.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: `pid` is our own child, not yet waited for; both pointers are
    // valid for the call. Its output is a few KiB, so it never blocks on a
    // full pipe before it exits.
    let waited = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
    assert_eq!(waited, pid, "wait4: {}", std::io::Error::last_os_error());
    assert!(
        std::process::ExitStatus::from_raw(status).success(),
        "{command:?} failed"
    );
    let mut stdout = String::new();
    std::io::Read::read_to_string(&mut child.stdout.expect("stdout"), &mut stdout).expect("read stdout");
    // ru_maxrss is in KiB on Linux.
    (stdout, usage.ru_maxrss as f64 / 1024.0)
}

/// `numastat -m`'s Total column by row name in MiB, and numastat's own
/// peak resident size.
fn numastat_totals() -> (BTreeMap<String, f64>, f64) {
    let (stdout, own_mib) = run_measured(Command::new("numastat").arg("-m"));
    let mut rows = BTreeMap::new();
    for line in stdout.lines() {
        let mut words = line.split_whitespace();
        let Some(name) = words.next() else { continue };
        let values: Vec<f64> = words.filter_map(|w| w.parse().ok()).collect();
        // A data row is a name, each node's value, and the total.
        if values.len() >= 2 && line.split_whitespace().count() == values.len() + 1 {
            rows.insert(name.to_string(), values[values.len() - 1]);
        }
    }
    (rows, own_mib)
}

/// `meminfo --json`'s totals in MiB, and its peak resident size.
fn meminfo_totals() -> (BTreeMap<String, f64>, f64) {
    let binary = assert_cmd::cargo::cargo_bin("numasleuth");
    let (stdout, own_mib) = run_measured(Command::new(binary).args(["meminfo", "--json"]));
    let doc: serde_json::Value = serde_json::from_str(&stdout).expect("JSON");
    assert_eq!(doc["schema"], "numasleuth.meminfo/1", "{doc:#}");
    let rows = doc["rows"]
        .as_array()
        .expect("rows")
        .iter()
        .map(|r| {
            let bytes = r["total_bytes"].as_u64().expect("total_bytes");
            (r["name"].as_str().expect("name").to_string(), bytes as f64 / 1048576.0)
        })
        .collect();
    (rows, own_mib)
}

fn close(a: f64, b: f64, share: f64) -> bool {
    (a - b).abs() <= (share * a.abs().max(b.abs())).max(0.01)
}

#[test]
fn every_stable_row_matches_numastat_m_within_one_percent() {
    let mut matched: BTreeMap<String, usize> = BTreeMap::new();
    let mut stable: BTreeMap<String, usize> = BTreeMap::new();
    let mut off: BTreeMap<String, String> = BTreeMap::new();
    for round in 0..MAX_ROUNDS {
        if round >= ROUNDS && MUST_COMPARE.iter().all(|must| matched.contains_key(*must)) {
            break;
        }
        let (before, numastat_before_mib) = numastat_totals();
        let (ours, own_mib) = meminfo_totals();
        let (after, numastat_after_mib) = numastat_totals();
        assert!(
            before.len() >= 20,
            "numastat -m gave too few rows to compare: {before:?}"
        );
        let readers_mib = own_mib.max(numastat_before_mib).max(numastat_after_mib);
        for (name, &a) in &before {
            let Some(&b) = after.get(name) else { continue };
            if !close(a, b, 0.005) {
                continue; // moved between the two numastat reads
            }
            *stable.entry(name.clone()).or_default() += 1;
            let theirs = (a + b) / 2.0;
            let mine = *ours
                .get(name)
                .unwrap_or_else(|| panic!("numastat -m has {name}, meminfo does not: {ours:?}"));
            let own = if USER_MEMORY_ROWS.contains(&name.as_str()) {
                readers_mib
            } else {
                0.0
            };
            if close(mine, theirs, 0.01) || (mine - theirs).abs() <= own {
                *matched.entry(name.clone()).or_default() += 1;
            } else {
                off.insert(
                    name.clone(),
                    format!("round {round}: meminfo {mine:.2} MiB, numastat -m {a:.2} then {b:.2} MiB"),
                );
            }
        }
    }
    // A row that held still at least twice but never matched is a real
    // difference.
    for (name, why) in &off {
        let judged = stable.get(name).copied().unwrap_or(0) >= 2;
        assert!(!judged || matched.contains_key(name), "{name}: {why}");
    }
    for must in MUST_COMPARE {
        assert!(matched.contains_key(must), "{must} was never compared: {matched:?}");
    }
    assert!(matched.len() >= 20, "only {} rows compared: {matched:?}", matched.len());
}

#[test]
fn nodes_are_chosen_with_dash_n_and_a_missing_node_is_one_line() {
    let fixture = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../tests/fixtures/qemu-four-nodes-asymmetric"
    );
    let doc = json(&["--root", fixture, "meminfo", "-N", "1-2", "--json"]);
    assert_eq!(doc["nodes"], serde_json::json!([1, 2]), "{doc:#}");
    let total = &doc["rows"][0];
    assert_eq!(total["name"], "MemTotal");
    let per_node: u64 = ["1", "2"]
        .iter()
        .map(|n| total["bytes_by_node"][n].as_u64().unwrap())
        .sum();
    assert_eq!(total["total_bytes"].as_u64().unwrap(), per_node);
    assert!(doc["provenance"]["snapshot"].is_object(), "{doc:#}");

    let out = numasleuth()
        .args(["--root", fixture, "meminfo", "-N", "7"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.starts_with("numasleuth: error: node 7 has no meminfo here; the nodes with one are 0-3"),
        "{err}"
    );
}

#[test]
fn a_kernel_without_node_meminfo_shows_the_machine_as_node_0() {
    let files: Vec<(String, String)> = two_node_files()
        .into_iter()
        .filter(|(path, _)| !path.starts_with("sys/devices/system/node"))
        .collect();
    let tree = tempfile::tempdir().unwrap();
    write_tree(tree.path(), &files);
    let root = tree.path().to_str().unwrap();
    let doc = json(&["--root", root, "meminfo", "--json"]);
    assert_eq!(doc["nodes"], serde_json::json!([0]), "{doc:#}");
    assert!(doc["rows"][0]["total_bytes"].as_u64().unwrap() > 0, "{doc:#}");
    assert!(
        doc["notes"]
            .as_array()
            .unwrap()
            .iter()
            .any(|n| n.as_str().unwrap().contains("no per-node meminfo")),
        "{doc:#}"
    );
}
