//! Findings that fit their cause: a CPU limit from `taskset` is not blamed
//! on the cgroup (and the other way round), an IRQ that never fired is
//! information, not a warning, and no finding cites an incident that does
//! not match it.

use crate::common;

use common::{doctor_json, host_tree_with};
use serde_json::Value;

fn finding(changes: &[(&str, Option<&str>)], id: &str) -> Value {
    let dir = host_tree_with(changes);
    let (_, json) = doctor_json(dir.path(), &[]);
    json["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["id"] == id)
        .cloned()
        .unwrap_or_else(|| panic!("{id} not raised: {json:#}"))
}

const STATUS: (&str, Option<&str>) = (
    "proc/self/status",
    Some("Cpus_allowed_list:\t0-1\nMems_allowed_list:\t0-1\n"),
);
const CGROUP_V2: [(&str, Option<&str>); 2] = [
    ("proc/mounts", Some("cgroup2 /sys/fs/cgroup cgroup2 rw 0 0\n")),
    ("proc/self/cgroup", Some("0::/job\n")),
];

#[test]
fn a_taskset_mask_is_not_blamed_on_the_cgroup() {
    // The cpuset allows every CPU; the mask is the process's own.
    let mut changes = vec![STATUS, ("sys/fs/cgroup/job/cpuset.cpus.effective", Some("0-3\n"))];
    changes.extend(CGROUP_V2);
    let f = finding(&changes, "cgroup-restricted");
    let (title, remedy) = (f["title"].as_str().unwrap(), f["remedy"].as_str().unwrap());
    assert!(title.contains("CPU affinity"), "{title}");
    assert!(remedy.contains("taskset") && !remedy.contains("systemctl"), "{remedy}");
    assert!(f["incident"].is_null());
}

#[test]
fn a_cpuset_limit_is_named_as_the_cgroup() {
    let mut changes = vec![STATUS, ("sys/fs/cgroup/job/cpuset.cpus.effective", Some("0-1\n"))];
    changes.extend(CGROUP_V2);
    let f = finding(&changes, "cgroup-restricted");
    let (title, remedy) = (f["title"].as_str().unwrap(), f["remedy"].as_str().unwrap());
    assert!(
        title.contains("cpuset cgroup") && !title.contains("affinity"),
        "{title}"
    );
    assert!(
        remedy.contains("systemctl set-property") && !remedy.contains("taskset -a"),
        "{remedy}"
    );
    assert!(
        f["evidence"].to_string().contains("the cpuset cgroup allows CPUs 0-1"),
        "{f}"
    );
}

#[test]
fn an_off_node_irq_that_never_fired_is_information() {
    let quiet = (
        "proc/interrupts",
        Some("  CPU0 CPU1 CPU2 CPU3\n 40: 0 0 0 0 IO-APIC 10-fasteoi eth0\n"),
    );
    let f = finding(
        &[("proc/irq/40/effective_affinity_list", Some("0\n")), quiet],
        "irq-off-node",
    );
    assert_eq!(f["severity"], "info", "{f}");
    assert!(f["title"].as_str().unwrap().contains("no interrupts since boot"), "{f}");
    let busy = finding(&[("proc/irq/40/effective_affinity_list", Some("0\n"))], "irq-off-node");
    assert_eq!(busy["severity"], "warning", "{busy}");
}

#[test]
fn no_evidence_shows_rust_debug_output() {
    let f = finding(
        &[
            ("proc/77/comm", Some("irqbalance\n")),
            ("proc/78/comm", Some("irqbalance\n")),
        ],
        "irqbalance-running",
    );
    // The sentences people read; the numbers are data in `values`.
    let evidence: String = f["evidence"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["text"].as_str().unwrap())
        .collect();
    assert!(evidence.contains("pid 77, 78"), "{evidence}");
    assert!(!evidence.contains("[77"), "{evidence}");
    assert_eq!(f["evidence"][0]["values"]["pids"], serde_json::json!([77, 78]));
}
