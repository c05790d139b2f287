//! `doctor` on synthetic trees: a healthy machine is clean, and every check
//! has a tree that trips it (positive) beside the healthy one (negative).

use crate::common;

use common::*;
use serde_json::Value;

use common::doctor_json as doctor;

fn finding_ids(json: &Value) -> Vec<String> {
    json["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["id"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn healthy_machine_is_clean_and_every_check_runs() {
    let dir = host_tree_with(&[]);
    let (code, json) = doctor(dir.path(), &["--fail-on", "info"]);
    assert_eq!(json["schema"], "numasleuth.doctor/2");
    assert!(finding_ids(&json).is_empty(), "{}", json["findings"]);
    // Only the measured checks are skipped, and they say how to run them.
    let skipped = json["checks_skipped"].as_array().unwrap();
    let mut skipped_ids: Vec<&str> = skipped.iter().map(|s| s["id"].as_str().unwrap()).collect();
    skipped_ids.sort_unstable();
    assert_eq!(
        skipped_ids,
        ["interconnect-bandwidth", "lock-taking-readers", "vcpu-siblings"]
    );
    assert!(skipped.iter().all(|s| s["why"].as_str().unwrap().contains("--measure")));
    let ran = json["checks_run"].as_array().unwrap();
    for id in [
        "cpu-less-nodes",
        "offline-cpus",
        "nodes-per-package",
        "numa-disabled",
        "cgroup-restricted",
        "numa-balancing",
        "zone-reclaim-mode",
        "transparent-hugepages",
        "min-free-kbytes",
        "zone-watermark-pressure",
        "free-memory-imbalance",
        "irq-off-node",
        "irqbalance-running",
    ] {
        assert!(ran.iter().any(|r| r == id), "{id} did not run");
    }
    assert_eq!(code, Some(0));
}

/// Files to replace (`Some`) or remove (`None`) in the healthy tree.
type Changes = Vec<(&'static str, Option<&'static str>)>;

/// Each check's id and the smallest change that must trip it.
fn positives() -> Vec<(&'static str, Changes)> {
    vec![
        (
            "cpu-less-nodes",
            vec![
                ("sys/devices/system/node/node1/cpulist", Some("\n")),
                ("sys/devices/system/cpu/online", Some("0-1\n")),
            ],
        ),
        ("offline-cpus", vec![("sys/devices/system/cpu/online", Some("0-2\n"))]),
        (
            "nodes-per-package",
            vec![("sys/devices/system/cpu/cpu2/topology/physical_package_id", Some("0\n"))],
        ),
        ("numa-disabled", vec![("proc/cmdline", Some("quiet numa=fake=4\n"))]),
        ("cgroup-restricted", vec![("proc/self/status", Some("Cpus_allowed_list:\t0-1\nMems_allowed_list:\t0\n"))]),
        ("numa-balancing", vec![("proc/sys/kernel/numa_balancing", Some("1\n"))]),
        ("zone-reclaim-mode", vec![("proc/sys/vm/zone_reclaim_mode", Some("1\n"))]),
        (
            "transparent-hugepages",
            vec![("sys/kernel/mm/transparent_hugepage/defrag", Some("[always] defer defer+madvise madvise never\n"))],
        ),
        ("min-free-kbytes", vec![("proc/sys/vm/min_free_kbytes", Some("262144\n"))]),
        (
            "zone-watermark-pressure",
            vec![(
                "proc/zoneinfo",
                Some("Node 0, zone   Normal\n  pages free     1100\n        min      1000\n        low      1250\n        high     1500\n        managed  250000\n"),
            )],
        ),
        (
            "free-memory-imbalance",
            vec![
                ("sys/devices/system/node/node0/meminfo", Some("Node 0 MemTotal: 1048576 kB\nNode 0 MemFree: 10240 kB\n")),
                ("sys/devices/system/node/node1/meminfo", Some("Node 1 MemTotal: 1048576 kB\nNode 1 MemFree: 838860 kB\n")),
            ],
        ),
        ("irq-off-node", vec![("proc/irq/40/effective_affinity_list", Some("0\n"))]),
        ("irqbalance-running", vec![("proc/77/comm", Some("irqbalance\n"))]),
    ]
}

/// Checks whose findings guard against none of the incidents.
const NO_INCIDENT: [&str; 4] = ["cpu-less-nodes", "offline-cpus", "cgroup-restricted", "numa-balancing"];

#[test]
fn every_check_has_a_positive_case() {
    for (id, changes) in positives() {
        let dir = host_tree_with(&changes);
        let (_, json) = doctor(dir.path(), &[]);
        let ids = finding_ids(&json);
        assert!(
            ids.iter().any(|f| f == id),
            "{id}: not raised by {changes:?}; got {ids:?}"
        );
        let finding = json["findings"]
            .as_array()
            .unwrap()
            .iter()
            .find(|f| f["id"] == id)
            .unwrap();
        for key in ["severity", "title", "remedy"] {
            assert!(!finding[key].as_str().unwrap_or("").is_empty(), "{id}: empty {key}");
        }
        // An incident is named only where one fits; otherwise it is null.
        match NO_INCIDENT.contains(&id) {
            true => assert!(finding["incident"].is_null(), "{id}: {}", finding["incident"]),
            false => assert!(
                !finding["incident"].as_str().unwrap_or("").is_empty(),
                "{id}: no incident"
            ),
        }
        assert!(!finding["evidence"].as_array().unwrap().is_empty(), "{id}: no evidence");
    }
}

#[test]
fn fail_on_sets_the_exit_code() {
    let dir = host_tree_with(&[("proc/sys/vm/zone_reclaim_mode", Some("1\n"))]);
    assert_eq!(doctor(dir.path(), &["--fail-on", "warning"]).0, Some(1));
    assert_eq!(doctor(dir.path(), &["--fail-on", "critical"]).0, Some(0));
    assert_eq!(doctor(dir.path(), &[]).0, Some(0));
}

#[test]
fn findings_are_ranked_by_severity() {
    let dir = host_tree_with(&[
        ("proc/sys/kernel/numa_balancing", Some("1\n")),
        (
            "proc/zoneinfo",
            Some("Node 1, zone   Normal\n  pages free     900\n        min      1000\n        low      1250\n        high     1500\n        managed  250000\n"),
        ),
    ]);
    let (_, json) = doctor(dir.path(), &[]);
    let severities: Vec<&str> = json["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["severity"].as_str().unwrap())
        .collect();
    assert_eq!(severities, ["critical", "info"]);
}

#[test]
fn unreadable_inputs_skip_checks_with_the_reason() {
    let dir = host_tree_with(&[("proc/zoneinfo", None), ("proc/interrupts", None)]);
    let (code, json) = doctor(dir.path(), &[]);
    assert_eq!(code, Some(0));
    let skipped = json["checks_skipped"].to_string();
    // Every kernel has both files: absent, they are a gap in the tree.
    for (check, file) in [
        ("zone-watermark-pressure", "/proc/zoneinfo"),
        ("irq-off-node", "/proc/interrupts"),
    ] {
        assert!(
            skipped.contains(check) && skipped.contains(&format!("{file}: not in this tree")),
            "{skipped}"
        );
        assert!(json["checks_incomplete"].to_string().contains(check), "{json}");
    }
}

#[test]
fn html_report_is_self_contained() {
    let dir = host_tree_with(&[("proc/irq/40/effective_affinity_list", Some("0\n"))]);
    let html = doctor_html(dir.path());
    assert!(html.starts_with("<!DOCTYPE html>"));
    assert!(html.contains("irq-off-node") && html.contains("<svg"));
    for external in ["http://", "https://", "<script", "<link"] {
        let allowed = external == "http://"
            && html
                .matches(external)
                .all(|_| html.contains("xmlns=\"http://www.w3.org/2000/svg\""));
        assert!(!html.contains(external) || allowed, "{external} in the report");
    }
}

#[test]
fn zone_reclaim_incident_machine_flags_node_1() {
    let fixture = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/zone-reclaim-incident");
    let (_, json) = doctor(&fixture, &[]);
    let pressure: Vec<&Value> = json["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["id"] == "zone-watermark-pressure")
        .collect();
    assert_eq!(pressure.len(), 1, "{}", json["findings"]);
    let title = pressure[0]["title"].as_str().unwrap();
    assert!(
        title.contains("node 1 zone Normal is near its low watermark"),
        "{title}"
    );
    assert!(pressure[0]["evidence"][0]["text"]
        .as_str()
        .unwrap()
        .contains("pages free 174188, min 131132, low 163915, high 196698"));
    let topo = &json["topology"];
    assert_eq!(
        topo["nodes"][0]["cpus"],
        serde_json::json!((0..32).step_by(2).collect::<Vec<u32>>())
    );
    assert_eq!(
        topo["nodes"][1]["cpus"],
        serde_json::json!((1..32).step_by(2).collect::<Vec<u32>>())
    );
}

#[test]
fn memwatch_json_lines_and_bounds() {
    let dir = host_tree_with(&[(
        "proc/vmstat",
        Some("pgscan_kswapd 5\npgscan_direct 0\nallocstall_normal 0\n"),
    )]);
    let output = numasleuth()
        .arg("--root")
        .arg(dir.path())
        .args(["memwatch", "--interval", "100ms", "--duration", "300ms", "--json"])
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", stderr(&output));
    let lines: Vec<Value> = String::from_utf8_lossy(&output.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    // A tree is one instant: one record, no samples over time.
    assert_eq!(lines.len(), 1, "one instant");
    assert_eq!(lines[0]["schema"], "numasleuth.memwatch/2");
    assert_eq!(lines[0]["type"], "instant");
    assert_eq!(lines[0]["nodes"][1]["free_pages"], 200000);
    assert_eq!(lines[0]["nodes"][1]["low_pages"], 1250);
    for bad in [["--interval", "10ms"], ["--duration", "0s"]] {
        let output = numasleuth()
            .arg("--root")
            .arg(dir.path())
            .arg("memwatch")
            .args(bad)
            .output()
            .unwrap();
        assert_eq!(output.status.code(), Some(2), "{bad:?}");
        assert!(stderr(&output).starts_with("numasleuth: error:") || stderr(&output).contains("error:"));
    }
}

#[test]
fn an_arm_capture_names_its_cpu_by_vendor_as_topo_does() {
    // Kunpeng 920: Arm cpuinfo names the implementer, not a model.
    let cpuinfo = "processor\t: 0\nBogoMIPS\t: 200.00\nCPU implementer\t: 0x48\nCPU architecture: 8\n\
                   CPU variant\t: 0x1\nCPU part\t: 0xd01\nCPU revision\t: 0\n";
    let dir = host_tree_with(&[("proc/cpuinfo", Some(cpuinfo))]);
    let root = dir.path().to_str().unwrap();
    for command in ["doctor", "topo"] {
        let out = output(&["--root", root, command]);
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(
            text.contains("HiSilicon") && !text.contains("unknown CPU"),
            "{command}: {text}"
        );
    }
}

#[test]
fn measure_needs_the_live_machine_and_adds_the_interconnect_check() {
    let dir = host_tree_with(&[]);
    let (_, json) = doctor(dir.path(), &["--measure"]);
    let skipped = json["checks_skipped"].to_string();
    assert!(
        skipped.contains("interconnect-bandwidth")
            && skipped.contains("vcpu-siblings")
            && skipped.contains("live machine"),
        "{skipped}"
    );
    assert!(json["measurements"].is_null());

    let output = numasleuth().args(["doctor", "--json", "--measure"]).output().unwrap();
    assert!(output.status.success(), "{}", stderr(&output));
    let live: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert!(
        live["checks_run"]
            .as_array()
            .unwrap()
            .iter()
            .any(|c| c == "interconnect-bandwidth"),
        "{}",
        live["checks_run"]
    );
    // The core-to-core check ran (two or more CPUs), or says why not.
    let siblings_ran = live["checks_run"]
        .as_array()
        .unwrap()
        .iter()
        .any(|c| c == "vcpu-siblings");
    assert!(
        siblings_ran || live["checks_skipped"].to_string().contains("vcpu-siblings"),
        "{live}"
    );
    let mem = &live["measurements"];
    assert_eq!(mem["schema"], "numasleuth.mem/2");
    // The quick matrices are sized from the caches all the same.
    assert!(mem["latency_ns"]["working_set_bytes"].as_u64().unwrap() > 0);
    assert_ne!(mem["latency_ns"]["chosen_by"], "size", "{}", mem["latency_ns"]);
    assert_eq!(mem["placement_verified"], true);
    let nodes = live["topology"]["nodes"].as_array().unwrap().len();
    assert_eq!(mem["latency_ns"]["nodes"].as_array().unwrap().len(), nodes);
    assert!(mem["latency_ns"]["matrix"][0][0]["median"].as_f64().unwrap() > 0.0);
}
