//! `snapshot -p`: a live process through an archive gives the same
//! `inspect --json` offline as live (per-page split included), `lines -p`
//! and `doctor -p` run on it, a process not in the snapshot is explained,
//! and `-p NAME` names exactly one process or is refused with the PIDs.

use crate::common;
use crate::victim_build;

use std::path::Path;
use std::process::{Child, Command};

use common::{numasleuth, stderr};
use serde_json::Value;

/// The victim, all its threads on CPU 0 so nothing moves between the live
/// reading and the snapshot; killed when dropped.
struct Pinned(Child);

impl Drop for Pinned {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Builds the victim under a name no other test's process has, and starts
/// it; waits until its threads run.
fn pinned_victim(dir: &Path, name: &str) -> (Pinned, u32) {
    let binary = victim_build::build(dir, name, &[]);
    let child = Command::new("taskset")
        .args(["-c", "0"])
        .arg(&binary)
        .args(["--workers", "1", "--worker-cpus", "0", "--seconds", "60"])
        .stdout(std::process::Stdio::null())
        .spawn()
        .expect("taskset (util-linux) runs");
    let pid = child.id();
    let waited = std::time::Instant::now();
    while std::fs::read_dir(format!("/proc/{pid}/task")).map_or(0, |d| d.count()) < 2 {
        assert!(waited.elapsed().as_secs() < 30, "the victim never started its worker");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    std::thread::sleep(std::time::Duration::from_millis(300));
    (Pinned(child), pid)
}

fn inspect_json(root: Option<&Path>, pid: u32) -> Value {
    let mut command = numasleuth();
    if let Some(root) = root {
        command.arg("--root").arg(root);
    }
    let out = command
        .args(["inspect", "-p", &pid.to_string(), "--json"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let mut doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    doc.as_object_mut().unwrap().remove("provenance");
    doc
}

#[test]
fn a_captured_process_inspects_the_same_offline_as_live() {
    let dir = tempfile::tempdir().unwrap();
    let (_victim, pid) = pinned_victim(dir.path(), "snapvictim");
    let live = inspect_json(None, pid);
    let archive = dir.path().join("s.tar.gz");
    // By name: the one process called snapvictim.
    let out = numasleuth()
        .args(["snapshot", "-p", "snapvictim", "-o"])
        .arg(&archive)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stderr(&out).contains(&format!("processes {pid}")), "{}", stderr(&out));
    let offline = inspect_json(Some(&archive), pid);
    assert_eq!(live, offline);
    // The static sections were split page by page, offline too.
    assert_eq!(offline["per_page_static"], true, "{offline:#}");

    let root = archive.to_str().unwrap();
    let pid_text = pid.to_string();
    let lines = numasleuth()
        .args(["--root", root, "lines", "-p", &pid_text])
        .output()
        .unwrap();
    assert!(lines.status.success(), "{}", stderr(&lines));
    assert!(String::from_utf8_lossy(&lines.stdout).contains("nil_root"));
    let doctor = numasleuth()
        .args(["--root", root, "doctor", "-p", &pid_text])
        .output()
        .unwrap();
    assert!(doctor.status.success(), "{}", stderr(&doctor));
    assert!(String::from_utf8_lossy(&doctor.stdout).contains("process-placement"));

    // A PID the snapshot does not hold says which it holds, and how.
    let missing = numasleuth()
        .args(["--root", root, "inspect", "-p", "1"])
        .output()
        .unwrap();
    assert_eq!(missing.status.code(), Some(2));
    assert_eq!(
        stderr(&missing),
        format!(
            "numasleuth: error: process 1 is not in this snapshot: the snapshot holds processes {pid}; take one \
             with `numasleuth snapshot -p 1 -o FILE` on the machine it runs on\n"
        )
    );
}

#[test]
fn a_snapshot_without_processes_says_so_and_names_are_exact() {
    let dir = tempfile::tempdir().unwrap();
    let archive = dir.path().join("plain.tar.gz");
    let out = numasleuth().args(["snapshot", "-o"]).arg(&archive).output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let me = std::process::id().to_string();
    let missing = numasleuth()
        .args(["--root", archive.to_str().unwrap(), "inspect", "-p", &me])
        .output()
        .unwrap();
    assert_eq!(missing.status.code(), Some(2));
    assert!(
        stderr(&missing).contains("the snapshot holds no process; take one with"),
        "{}",
        stderr(&missing)
    );
    // Two processes of one name: listed, nothing written.
    let (_a, a) = pinned_victim(dir.path(), "twinvictim");
    let (_b, b) = pinned_victim(dir.path(), "twinvictim");
    let twins = dir.path().join("twins.tar.gz");
    let out = numasleuth()
        .args(["snapshot", "-p", "twinvictim", "-o"])
        .arg(&twins)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert!(err.contains("`twinvictim` names 2 processes"), "{err}");
    assert!(err.contains(&a.to_string()) && err.contains(&b.to_string()), "{err}");
    assert!(!twins.exists());
    let none = numasleuth()
        .args(["snapshot", "-p", "no-such-name-xyz", "-o"])
        .arg(&twins)
        .output()
        .unwrap();
    assert_eq!(none.status.code(), Some(2));
    assert!(stderr(&none).contains("no process is named `no-such-name-xyz`"));
}
