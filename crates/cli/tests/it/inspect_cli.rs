//! `numasleuth inspect`: the live victim's .bss, heap and stack, the
//! database incident replayed offline under --root, and the clear errors
//! (no such process, another user's process, kernel threads).

use crate::common;
use crate::victim_build;

use common::{numasleuth, stderr, two_node_files, write_tree};
use numasleuth_symbols::open::ObjectSource;
use serde_json::Value;

fn inspect_json(args: &[&str]) -> Value {
    let output = numasleuth().args(args).arg("--json").output().unwrap();
    assert!(output.status.success(), "{}", stderr(&output));
    serde_json::from_slice(&output.stdout).unwrap()
}

fn pages(mapping: &Value) -> u64 {
    mapping["pages_by_node"]
        .as_object()
        .unwrap()
        .values()
        .map(|v| v.as_u64().unwrap())
        .sum()
}

#[test]
fn live_victim_bss_heap_and_stack() {
    let dir = tempfile::tempdir().unwrap();
    let binary = victim_build::build(dir.path(), "victim", &[]);
    let victim = victim_build::start(&binary, &["--workers", "2", "--seconds", "30"]);
    let doc = inspect_json(&["inspect", &victim.pid.to_string()]);
    assert_eq!(doc["schema"], "numasleuth.inspect/2");
    assert_eq!(doc["pid"], victim.pid);
    assert_eq!(doc["program"], binary.to_str().unwrap());
    let threads = doc["threads"].as_array().unwrap();
    assert_eq!(threads.len(), 3, "main and two workers");
    assert!(threads
        .iter()
        .all(|t| t["tid"].is_u64() && t["cpu"].is_u64() && t["node"].is_u64()));
    let mappings = doc["mappings"].as_array().unwrap();
    let of_kind = |kind: &'static str| mappings.iter().filter(move |m| m["kind"] == kind);
    let bss: Vec<&Value> = of_kind("bss")
        .filter(|m| m["object"] == binary.to_str().unwrap())
        .collect();
    assert!(!bss.is_empty(), "victim .bss listed: {doc:#}");
    assert!(bss.iter().all(|m| m["section"] == ".bss"));
    // The page holding nil_root: resident, counted exactly.
    let hot = bss
        .iter()
        .find(|m| {
            let range = |k: &str| u64::from_str_radix(m[k].as_str().unwrap().trim_start_matches("0x"), 16).unwrap();
            range("start") <= victim.nil_root && victim.nil_root < range("end")
        })
        .expect("a .bss range holds nil_root");
    assert!(pages(hot) > 0);
    assert_eq!(hot["accuracy"], "per-page");
    assert!(of_kind("data").any(|m| m["section"] == ".data" && pages(m) > 0));
    assert!(of_kind("heap").any(|m| pages(m) > 0), "heap");
    assert!(of_kind("stack").any(|m| pages(m) > 0), "stack");
    assert!(of_kind("text").any(|m| m["section"] == ".text"));
    let memory = &doc["memory"];
    assert!(memory["bytes_by_group"]["writable-static"]
        .as_object()
        .is_some_and(|n| !n.is_empty()));
    assert_eq!(memory["total_bytes"], memory["bytes_by_node"]["0"], "one node here");
    assert_eq!(doc["per_page_static"], true);
    assert!(
        doc["findings"].as_array().unwrap().is_empty(),
        "nothing is remote on one node"
    );
    // Text mode says the same in words.
    let output = numasleuth()
        .args(["inspect", &victim.pid.to_string()])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&output.stdout);
    assert!(
        text.contains("writable static (.data .bss .got)") && text.contains(".bss"),
        "{text}"
    );
}

#[test]
fn no_such_process() {
    let output = numasleuth().args(["inspect", "4194303"]).output().unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert_eq!(
        stderr(&output),
        "numasleuth: error: no such process: 4194303 (/proc/4194303/stat does not exist)\n"
    );
}

#[test]
fn another_users_process_is_a_permission_message() {
    let dir = tempfile::tempdir().unwrap();
    let binary = victim_build::build(dir.path(), "victim", &[]);
    common::require_root("it runs numasleuth as another user");
    let victim = victim_build::start(&binary, &["--workers", "1", "--seconds", "30"]);
    let output = std::process::Command::new("setpriv")
        .args(["--reuid=65534", "--regid=65534", "--clear-groups"])
        .arg(assert_cmd::cargo::cargo_bin("numasleuth"))
        .args(["inspect", &victim.pid.to_string()])
        .output()
        .expect("setpriv (util-linux) runs");
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    let message = stderr(&output);
    assert!(message.starts_with("numasleuth: error: /proc/"), "{message}");
    assert!(message.contains("permission denied"), "{message}");
    assert!(message.contains("run as root or with CAP_SYS_PTRACE"), "{message}");
}

#[test]
fn a_kernel_thread_has_no_memory_and_says_so() {
    let comm = std::fs::read_to_string("/proc/2/comm").unwrap_or_default();
    assert_eq!(
        comm.trim(),
        "kthreadd",
        "on Linux PID 2 is kthreadd (outside a PID namespace)"
    );
    let doc = inspect_json(&["inspect", "2"]);
    assert_eq!(doc["kernel_thread"], true);
    assert!(doc["mappings"].as_array().unwrap().is_empty());
    let output = numasleuth().args(["inspect", "2"]).output().unwrap();
    assert!(String::from_utf8_lossy(&output.stdout).contains("kernel thread: it has no user memory"));
}

/// The incident, replayed from files: a two-node machine, the victim's
/// binary inside the root, its .data/.bss pages on node 1 in numa_maps and
/// every thread on a node-0 CPU.
#[test]
fn the_incident_offline_static_data_on_node_1() {
    let build_dir = tempfile::tempdir().unwrap();
    let binary = victim_build::build(build_dir.path(), "victim", &[]);
    let root = incident_root(&binary);

    let doc = inspect_json(&["--root", root.path().to_str().unwrap(), "inspect", "4242"]);
    assert_eq!(doc["thread_nodes"], serde_json::json!([0]));
    let finding = doc["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["id"] == "static-data-remote")
        .unwrap_or_else(|| panic!("static-data-remote: {doc:#}"));
    assert_eq!(finding["severity"], "warning");
    assert_eq!(
        finding["title"],
        "writable static data of /opt/victim is on node 1 while all 3 threads run on node 0"
    );
    assert!(finding["remedy"]
        .as_str()
        .unwrap()
        .contains("numasleuth move -p 4242 --section .bss --to-node 0 --apply"));
    assert_eq!(doc["per_page_static"], false, "a snapshot cannot be asked per page");
    assert!(doc["notes"]
        .as_array()
        .unwrap()
        .iter()
        .any(|n| n.as_str().unwrap().contains("needs the live system")));
    let bss = doc["mappings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["section"] == ".bss")
        .count();
    assert!(bss >= 1);
    assert_eq!(doc["memory"]["remote_bytes"], doc["memory"]["bytes_by_node"]["1"]);
    assert!(doc["memory"]["remote_share"].as_f64().unwrap() > 0.0);
}

/// A two-node machine as files: the victim's binary inside the root, its
/// .data/.bss pages on node 1 in numa_maps and every thread on a node-0 CPU.
fn incident_root(binary: &std::path::Path) -> tempfile::TempDir {
    let image = ObjectSource::file(binary.to_str().unwrap()).image().unwrap();
    let bias = 0x5555_5555_4000u64;
    let page = |a: u64| a & !0xfff;
    let up = |a: u64| (a + 0xfff) & !0xfff;
    let (mut maps, mut numa) = (String::new(), String::new());
    for s in &image.load_segments {
        let start = bias + page(s.vaddr);
        let file_end = bias + up(s.vaddr + s.file_size_bytes);
        let perms = format!(
            "r{}{}p",
            if s.write { 'w' } else { '-' },
            if s.exec { 'x' } else { '-' }
        );
        let node = if s.write { 1 } else { 0 };
        maps.push_str(&format!(
            "{start:x}-{file_end:x} {perms} {:08x} fe:00 77 /opt/victim\n",
            page(s.file_offset)
        ));
        numa.push_str(&format!(
            "{start:x} default file=/opt/victim anon=1 dirty=1 N{node}=1 kernelpagesize_kB=4\n"
        ));
        let mem_end = bias + up(s.vaddr + s.mem_size_bytes);
        if mem_end > file_end {
            maps.push_str(&format!("{file_end:x}-{mem_end:x} rw-p 00000000 00:00 0\n"));
            numa.push_str(&format!(
                "{file_end:x} default anon=3 dirty=3 N1=3 kernelpagesize_kB=4\n"
            ));
        }
    }
    maps.push_str("7ffc9c7d7000-7ffc9c7f8000 rw-p 00000000 00:00 0                          [stack]\n");
    numa.push_str("7ffc9c7d7000 default stack anon=3 dirty=3 N0=2 N1=1 kernelpagesize_kB=4\n");
    let stat = |tid: u32, cpu: u32| {
        format!("{tid} (victim) S 1 4242 1 0 -1 4194304 0 0 0 0 0 0 0 0 20 0 3 0 777 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 17 {cpu} 0 0\n")
    };
    let status = "Name:\tvictim\nCpus_allowed_list:\t0-3\nMems_allowed_list:\t0-1\n".to_string();
    let mut files = two_node_files();
    for (tid, cpu) in [(4242, 1), (4243, 0), (4244, 1)] {
        files.push((format!("proc/4242/task/{tid}/stat"), stat(tid, cpu)));
        files.push((format!("proc/4242/task/{tid}/status"), status.clone()));
    }
    files.push(("proc/4242/stat".into(), stat(4242, 1)));
    files.push(("proc/4242/maps".into(), maps));
    files.push(("proc/4242/numa_maps".into(), numa));
    let root = tempfile::tempdir().unwrap();
    write_tree(root.path(), &files);
    std::fs::create_dir_all(root.path().join("opt")).unwrap();
    std::fs::copy(binary, root.path().join("opt/victim")).unwrap();
    root
}

/// `doctor --pid` adds the inspect findings of that process to the
/// diagnosis; a PID that does not exist is an error.
#[test]
fn doctor_pid_adds_the_process_findings() {
    let build_dir = tempfile::tempdir().unwrap();
    let binary = victim_build::build(build_dir.path(), "victim", &[]);
    let root = incident_root(&binary);
    let root_arg = root.path().to_str().unwrap();
    let doc = inspect_json(&["--root", root_arg, "doctor", "--pid", "4242"]);
    assert_eq!(doc["schema"], "numasleuth.doctor/2");
    assert!(doc["checks_run"]
        .as_array()
        .unwrap()
        .iter()
        .any(|c| c == "process-placement"));
    let finding = doc["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["id"] == "static-data-remote")
        .unwrap_or_else(|| panic!("static-data-remote: {doc:#}"));
    assert!(finding["remedy"].as_str().unwrap().contains("numasleuth move -p 4242"));
    let output = numasleuth()
        .args(["--root", root_arg, "doctor", "--pid", "4242"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&output.stdout);
    assert!(text.contains("[static-data-remote]"), "{text}");
    // A PID the tree does not hold is the user's mistake: exit 2, one line
    // that says which processes it does hold.
    let output = numasleuth()
        .args(["--root", root_arg, "doctor", "--pid", "4243"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr
            .starts_with("numasleuth: error: process 4243 is not in this snapshot: the snapshot holds processes 4242")
            && stderr.lines().count() == 1,
        "{stderr}"
    );
}
