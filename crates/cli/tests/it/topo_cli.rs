//! `topo` end to end on synthetic trees: the schema, restrictions, bad
//! files that degrade the topology with a warning naming them, and the
//! inputs that must end in a clear error with exit 2, never a panic.

use crate::common;

use common::*;

#[test]
fn json_schema_names_and_meanings() {
    let dir = tree_with(&[]);
    let json = topo_json(dir.path());
    assert_eq!(json["schema"], "numasleuth.topo/1");
    let nodes = json["nodes"].as_array().unwrap();
    assert_eq!(nodes.len(), 2);
    assert_eq!(nodes[1]["id"], 1);
    assert_eq!(nodes[1]["cpus"], serde_json::json!([2, 3]));
    assert_eq!(nodes[1]["has_cpus"], true);
    assert_eq!(nodes[1]["memory_total_bytes"], 1048576u64 * 1024);
    assert_eq!(nodes[1]["memory_free_bytes"], 524288u64 * 1024);
    assert_eq!(nodes[0]["distances"], serde_json::json!([10, 21]));
    let cpus = json["cpus"].as_array().unwrap();
    assert_eq!(cpus.len(), 4);
    assert_eq!(
        cpus[3],
        serde_json::json!({"id": 3, "node": 1, "package": 1, "die": null, "cluster": null,
        "core": 1, "online": true, "thread_siblings": null})
    );
    assert!(json["devices"].as_array().unwrap().is_empty());
    assert!(json["warnings"].as_array().unwrap().is_empty(), "{}", json["warnings"]);
}

#[test]
fn cpu_less_node_and_missing_distance_entries_are_null() {
    // Node 2 is memory only (CXL-style), has no distance file, and is not in
    // the online mask the other rows are indexed by, so no row knows it.
    let dir = tree_with(&[
        ("sys/devices/system/node/node2/cpulist", Some("\n")),
        (
            "sys/devices/system/node/node2/meminfo",
            Some("Node 2 MemTotal: 4096 kB\nNode 2 MemFree: 4096 kB\n"),
        ),
    ]);
    let json = topo_json(dir.path());
    let node2 = &json["nodes"][2];
    assert_eq!(node2["has_cpus"], false);
    assert_eq!(node2["cpus"], serde_json::json!([]));
    assert_eq!(node2["distances"], serde_json::json!([null, null, null]));
    assert_eq!(json["nodes"][0]["distances"], serde_json::json!([10, 21, null]));
    let text = numasleuth().arg("--root").arg(dir.path()).arg("topo").output().unwrap();
    assert!(String::from_utf8_lossy(&text.stdout).contains("memory only (no CPUs)"));
}

#[test]
fn no_node_sysfs_shows_one_implicit_node() {
    let dir = tempfile::tempdir().unwrap();
    let files: Vec<_> = two_node_files()
        .into_iter()
        .filter(|(p, _)| !p.starts_with("sys/devices/system/node"))
        .collect();
    write_tree(dir.path(), &files);
    let json = topo_json(dir.path());
    assert_eq!(json["numa_source"], "implicit");
    assert_eq!(json["nodes"].as_array().unwrap().len(), 1);
    assert_eq!(json["nodes"][0]["cpus"], serde_json::json!([0, 1, 2, 3]));
    assert_eq!(json["nodes"][0]["memory_total_bytes"], 2097152u64 * 1024);
    assert_eq!(json["nodes"][0]["distances"], serde_json::json!([null]));
    assert!(json["warnings"][0].as_str().unwrap().contains("implicit node 0"));
}

#[test]
fn offline_and_cgroup_restricted_cpus_are_warned_about() {
    let dir = tree_with(&[
        ("sys/devices/system/cpu/online", Some("0-2\n")),
        ("sys/devices/system/cpu/offline", Some("3\n")),
        (
            "proc/self/status",
            Some("Cpus_allowed_list:\t0\nMems_allowed_list:\t0\n"),
        ),
        ("proc/mounts", Some("cgroup2 /sys/fs/cgroup cgroup2 rw 0 0\n")),
        ("proc/self/cgroup", Some("0::/job\n")),
        ("sys/fs/cgroup/job/cpuset.cpus.effective", Some("0\n")),
        ("sys/fs/cgroup/job/cpuset.mems.effective", Some("0\n")),
    ]);
    let json = topo_json(dir.path());
    assert_eq!(json["cpus"][3]["online"], false);
    assert_eq!(json["restrictions"]["offline_cpus"], serde_json::json!([3]));
    assert_eq!(json["restrictions"]["cgroup_version"], 2);
    assert_eq!(json["restrictions"]["cgroup_cpus"], serde_json::json!([0]));
    let warnings = json["warnings"].to_string();
    assert!(warnings.contains("CPU 3 is offline"), "{warnings}");
    assert!(warnings.contains("may run only on CPUs 0 of online 0-2"), "{warnings}");
    assert!(warnings.contains("cgroup v2 cpuset /job"), "{warnings}");
    assert!(warnings.contains("may allocate only on nodes 0"), "{warnings}");
}

fn assert_clean_failure(root: &std::path::Path, expected: &str) {
    let output = numasleuth().arg("--root").arg(root).arg("topo").output().unwrap();
    let err = stderr(&output);
    assert_eq!(output.status.code(), Some(2), "stderr: {err}");
    assert!(err.starts_with("numasleuth: error: "), "{err}");
    assert!(err.contains(expected), "expected `{expected}` in: {err}");
    assert!(!err.contains("panicked"), "{err}");
}

#[test]
fn nonexistent_root_is_exit_2() {
    assert_clean_failure(
        std::path::Path::new("/nonexistent/numasleuth"),
        "/nonexistent/numasleuth: not found",
    );
}

/// `topo --json` on a tree with one bad file: it succeeds, shows the
/// rest, and names the file in `warnings`.
fn degraded(dir: &tempfile::TempDir, file: &str) -> serde_json::Value {
    let json = topo_json(dir.path());
    let warnings = json["warnings"].to_string();
    assert!(warnings.contains(file), "no warning names {file}: {warnings}");
    json
}

#[test]
fn truncated_distance_drops_only_that_row() {
    let dir = tree_with(&[("sys/devices/system/node/node1/distance", Some("21\n"))]);
    let json = degraded(&dir, "node1/distance: malformed: 1 entries but 2 nodes");
    assert_eq!(json["nodes"][1]["distances"], serde_json::json!([null, null]));
    assert_eq!(json["nodes"][0]["distances"], serde_json::json!([10, 21]));
}

#[test]
fn garbage_cpulist_drops_only_that_list() {
    let dir = tree_with(&[("sys/devices/system/node/node0/cpulist", Some("zero-one\n"))]);
    let json = degraded(&dir, "/sys/devices/system/node/node0/cpulist: malformed");
    assert_eq!(json["nodes"].as_array().unwrap().len(), 2);
    assert_eq!(json["nodes"][1]["cpus"], serde_json::json!([2, 3]));
    assert_eq!(json["nodes"][0]["memory_total_bytes"], 1048576u64 * 1024);
}

#[test]
fn empty_node_directory_is_left_out_with_a_warning() {
    let dir = tree_with(&[]);
    std::fs::create_dir_all(dir.path().join("sys/devices/system/node/node7")).unwrap();
    let json = degraded(
        &dir,
        "/sys/devices/system/node/node7: holds no cpulist, cpumap or meminfo",
    );
    assert_eq!(json["nodes"].as_array().unwrap().len(), 2);
}

/// Root reads through `chmod 000`; a directory where the file belongs
/// (EISDIR) is unreadable to everyone.
fn make_unreadable(root: &std::path::Path, path: &str) {
    std::fs::remove_file(root.join(path)).unwrap();
    std::fs::create_dir(root.join(path)).unwrap();
}

#[test]
fn unreadable_node_meminfo_degrades_and_names_the_file() {
    let dir = tree_with(&[]);
    make_unreadable(dir.path(), "sys/devices/system/node/node1/meminfo");
    let json = degraded(&dir, "/sys/devices/system/node/node1/meminfo: is a directory");
    assert_eq!(json["nodes"][1]["memory_total_bytes"], serde_json::Value::Null);
    assert_eq!(json["nodes"][1]["cpus"], serde_json::json!([2, 3]));
    assert_eq!(json["nodes"][0]["memory_total_bytes"], 1048576u64 * 1024);

    // Text: the topology on stdout, the warning on stderr.
    let output = numasleuth().arg("--root").arg(dir.path()).arg("topo").output().unwrap();
    assert!(output.status.success(), "{}", stderr(&output));
    let err = stderr(&output);
    assert!(
        err.starts_with("numasleuth: warning: could not read /sys/devices/system/node/node1/meminfo: "),
        "{err}"
    );
    assert!(
        String::from_utf8_lossy(&output.stdout).contains("2-3"),
        "node 1 is still shown"
    );
}

#[test]
fn malformed_node_meminfo_degrades() {
    let dir = tree_with(&[(
        "sys/devices/system/node/node0/meminfo",
        Some("Node 0 MemTotal: lots kB\n"),
    )]);
    degraded(&dir, "/sys/devices/system/node/node0/meminfo: malformed");
}

#[test]
fn unreadable_cpu_files_degrade() {
    let dir = tree_with(&[]);
    make_unreadable(dir.path(), "sys/devices/system/cpu/cpu3/topology/core_id");
    make_unreadable(dir.path(), "sys/devices/system/cpu/online");
    let json = degraded(&dir, "/sys/devices/system/cpu/cpu3/topology/core_id");
    assert!(json["warnings"].to_string().contains("/sys/devices/system/cpu/online"));
    assert_eq!(json["cpus"][3]["core"], serde_json::Value::Null);
    assert_eq!(json["cpus"][3]["package"], 1);
}

#[test]
fn doctor_degrades_the_same_way() {
    let dir = host_tree_with(&[]);
    make_unreadable(dir.path(), "sys/devices/system/node/node1/meminfo");
    let output = numasleuth()
        .arg("--root")
        .arg(dir.path())
        .args(["doctor", "--json"])
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", stderr(&output));
    let json: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert!(json["topology"]["warnings"].to_string().contains("node1/meminfo"));
    let partial = json["checks_partial"].to_string();
    assert!(
        partial.contains("free-memory-imbalance") && partial.contains("node1/meminfo"),
        "{partial}"
    );
}

#[test]
fn nothing_readable_at_all_is_exit_2() {
    let dir = tree_with(&[]);
    for path in ["sys/devices/system/node", "sys/devices/system/cpu"] {
        std::fs::remove_dir_all(dir.path().join(path)).unwrap();
        std::fs::write(dir.path().join(path), "not a directory\n").unwrap();
    }
    make_unreadable(dir.path(), "proc/meminfo");
    // Refused as no machine, naming the first file that could not be read.
    assert_clean_failure(
        dir.path(),
        "cannot read the machine's topology: /sys/devices/system/cpu: no CPU",
    );
    assert_clean_failure(dir.path(), "(first unreadable file: /proc/meminfo: ");
}

#[test]
fn broken_pipe_exits_zero() {
    let fixture = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../tests/fixtures/zone-reclaim-incident"
    );
    let (status, stderr) = common::run_into_a_closed_pipe(&["--root", fixture, "topo", "--json"]);
    assert_eq!(status.code(), Some(0), "{stderr}");
    assert!(!stderr.contains("error"), "{stderr}");
}
