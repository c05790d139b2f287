//! Synthetic kernel trees for CLI tests: small, explicit, and each test
//! changes only the file it is about.

#![allow(dead_code)]

use std::fs;
use std::path::Path;
use std::process::Output;

use assert_cmd::Command;
use serde_json::Value;

/// A two-node, four-CPU machine: node 0 has CPUs 0-1, node 1 CPUs 2-3.
pub fn two_node_files() -> Vec<(String, String)> {
    let mut files: Vec<(String, String)> = vec![
        ("sys/devices/system/node/online", "0-1\n"),
        ("sys/devices/system/node/possible", "0-1\n"),
        ("sys/devices/system/node/has_cpu", "0-1\n"),
        ("sys/devices/system/node/has_memory", "0-1\n"),
        ("sys/devices/system/node/node0/cpulist", "0-1\n"),
        ("sys/devices/system/node/node0/distance", "10 21\n"),
        ("sys/devices/system/node/node1/cpulist", "2-3\n"),
        ("sys/devices/system/node/node1/distance", "21 10\n"),
        ("sys/devices/system/cpu/online", "0-3\n"),
        ("sys/devices/system/cpu/present", "0-3\n"),
        ("proc/meminfo", "MemTotal: 2097152 kB\nMemFree: 1048576 kB\n"),
        ("proc/self/status", "Cpus_allowed_list:\t0-3\nMems_allowed_list:\t0-1\n"),
    ]
    .into_iter()
    .map(|(a, b)| (a.to_string(), b.to_string()))
    .collect();
    for node in 0..2 {
        files.push((
            format!("sys/devices/system/node/node{node}/meminfo"),
            format!("Node {node} MemTotal: 1048576 kB\nNode {node} MemFree: 524288 kB\n"),
        ));
    }
    for cpu in 0..4 {
        let dir = format!("sys/devices/system/cpu/cpu{cpu}/topology");
        files.push((format!("{dir}/physical_package_id"), format!("{}\n", cpu / 2)));
        files.push((format!("{dir}/core_id"), format!("{}\n", cpu % 2)));
    }
    files
}

pub fn write_tree(dir: &Path, files: &[(String, String)]) {
    for (path, contents) in files {
        let at = dir.join(path);
        fs::create_dir_all(at.parent().unwrap()).unwrap();
        fs::write(at, contents).unwrap();
    }
}

/// `two_node_files` with some files replaced (or removed, for `None`).
pub fn tree_with(changes: &[(&str, Option<&str>)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let mut files = two_node_files();
    for (path, contents) in changes {
        files.retain(|(p, _)| p != path);
        if let Some(contents) = contents {
            files.push((path.to_string(), contents.to_string()));
        }
    }
    write_tree(dir.path(), &files);
    dir
}

pub fn numasleuth() -> Command {
    Command::cargo_bin("numasleuth").unwrap()
}

pub fn topo_json(root: &Path) -> Value {
    let output = numasleuth()
        .arg("--root")
        .arg(root)
        .args(["topo", "--json"])
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    serde_json::from_slice(&output.stdout).unwrap()
}

pub fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// Drops fields that legitimately change between two reads of one machine.
pub fn without_volatile(mut value: Value) -> Value {
    if let Some(nodes) = value["nodes"].as_array_mut() {
        for node in nodes {
            node.as_object_mut().unwrap().remove("memory_free_bytes");
        }
    }
    value
}
