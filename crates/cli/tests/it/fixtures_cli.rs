//! The checked-in fixture trees, captured with `numasleuth snapshot` in the
//! QEMU guests and on the development VM, replayed offline. These pin what
//! the real kernels showed, so a reader change that breaks them is caught
//! even where QEMU cannot run.

use crate::common;

use std::path::PathBuf;

use common::*;
use serde_json::json;

fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/fixtures")
        .join(name)
}

fn node_cpus(topo: &serde_json::Value) -> Vec<serde_json::Value> {
    topo["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n["cpus"].clone())
        .collect()
}

#[test]
fn every_fixture_replays() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures");
    let mut seen = 0;
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        for command in [["topo", "--json"], ["doctor", "--json"]] {
            let output = numasleuth().arg("--root").arg(&path).args(command).output().unwrap();
            assert!(
                output.status.success(),
                "{} {command:?}: {}",
                path.display(),
                stderr(&output)
            );
        }
        seen += 1;
    }
    assert!(seen >= 6, "only {seen} fixtures");
}

#[test]
fn three_nodes_nic_guest() {
    let topo = topo_json(&fixture("qemu-three-nodes-nic"));
    assert_eq!(node_cpus(&topo), [json!([0, 1]), json!([2, 3]), json!([])]);
    assert_eq!(topo["nodes"][2]["has_cpus"], false);
    assert_eq!(topo["nodes"][0]["distances"], json!([10, 21, 30]));
    let nic = topo["devices"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["kind"] == "net")
        .unwrap();
    assert_eq!(
        (nic["name"].as_str(), nic["pci"].as_str()),
        (Some("eth0"), Some("0000:11:01.0"))
    );
    assert_eq!(
        (nic["node"].clone(), nic["local_cpus"].clone()),
        (json!(1), json!([2, 3]))
    );
    // The snapshot was taken before `irq --apply`: the IRQ is off-node.
    let output = numasleuth()
        .arg("--root")
        .arg(fixture("qemu-three-nodes-nic"))
        .args(["doctor", "--json"])
        .output()
        .unwrap();
    let doctor: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    let ids: Vec<&str> = doctor["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|f| f["id"].as_str())
        .collect();
    assert!(
        ids.contains(&"irq-off-node") && ids.contains(&"cpu-less-nodes"),
        "{ids:?}"
    );
}

#[test]
fn four_nodes_asymmetric_guest() {
    let topo = topo_json(&fixture("qemu-four-nodes-asymmetric"));
    let rows: Vec<_> = topo["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n["distances"].clone())
        .collect();
    assert_eq!(
        rows,
        [
            json!([10, 12, 20, 31]),
            json!([12, 10, 17, 25]),
            json!([20, 17, 10, 14]),
            json!([28, 25, 14, 10])
        ]
    );
}

#[test]
fn offline_cpu_guest() {
    let topo = topo_json(&fixture("qemu-offline-cpu"));
    assert_eq!(node_cpus(&topo), [json!([0, 1]), json!([2])]);
    assert_eq!(topo["cpus"][3]["online"], false);
    assert_eq!(topo["cpus"][3]["node"], 1, "node from the cpu3/node1 link");
    assert_eq!(topo["restrictions"]["offline_cpus"], json!([3]));
}

#[test]
fn two_nodes_guest_and_dev_vm() {
    let topo = topo_json(&fixture("qemu-two-nodes"));
    assert_eq!(node_cpus(&topo), [json!([0, 1]), json!([2, 3])]);
    assert_eq!(topo["nodes"][1]["distances"], json!([20, 10]));
    let vm = topo_json(&fixture("kvm-2cpu-1node"));
    assert_eq!(node_cpus(&vm), [json!([0, 1])]);
}
