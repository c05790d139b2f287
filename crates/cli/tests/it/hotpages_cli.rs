//! `numasleuth hotpages` on this machine. Whatever DAMON this kernel has,
//! the kdamonds something else set up must be exactly as they were after a
//! run: on the development VM (6.18 without `CONFIG_DAMON_VADDR`, its own
//! paddr kdamond 0 running) hotpages must refuse in one line (exit 2)
//! without writing anything; on a machine where DAMON can watch a process
//! it must run and leave no kdamond of its own. The kdamond really
//! starting, sampling and being reaped after SIGKILL is tested in the 6.12
//! guest (crates/testbed/tests/it/hotpages_guest.rs).

use crate::common;

use std::fs;
use std::io::Write;
use std::process::{Command, Stdio};

use common::{numasleuth, require_root, stderr};
use serde_json::Value;

const KDAMONDS: &str = "/sys/kernel/mm/damon/admin/kdamonds";

/// Every file hotpages' reader looks at, with its contents: what must not
/// change. `None` for a file that is not there.
fn damon_state() -> Vec<(String, Option<String>)> {
    let read = |p: &str| fs::read_to_string(p).ok().map(|s| s.trim().to_string());
    let mut files = vec![format!("{KDAMONDS}/nr_kdamonds")];
    let nr: u64 = read(&files[0]).and_then(|n| n.parse().ok()).unwrap_or(0);
    for k in 0..nr.min(64) {
        let dir = format!("{KDAMONDS}/{k}");
        files.extend(["state", "pid", "contexts/nr_contexts"].map(|f| format!("{dir}/{f}")));
        let c = format!("{dir}/contexts/0");
        files.extend(
            [
                "operations",
                "targets/nr_targets",
                "targets/0/pid_target",
                "monitoring_attrs/intervals/sample_us",
                "monitoring_attrs/intervals/aggr_us",
                "monitoring_attrs/nr_regions/min",
                "monitoring_attrs/nr_regions/max",
                "schemes/nr_schemes",
                "schemes/0/action",
            ]
            .map(|f| format!("{c}/{f}")),
        );
    }
    files.into_iter().map(|f| (f.clone(), read(&f))).collect()
}

/// The answers a machine where DAMON cannot watch a process may give.
const NOT_HERE: [&str; 4] = [
    "no DAMON sysfs interface",
    "no virtual-address operations",
    "DAMON needs root",
    "cannot get a kdamond of its own",
];

#[test]
fn hotpages_leaves_this_machines_kdamonds_as_they_were() {
    require_root("DAMON's sysfs files are root-only");
    let mut busy = Command::new("sh")
        .args(["-c", "while :; do :; done"])
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    let before = damon_state();
    let output = numasleuth()
        .args(["hotpages", "-p", &busy.id().to_string(), "--duration", "2s", "--json"])
        .env("NUMASLEUTH_DAMON_CLAIMS", tempfile::tempdir().unwrap().path())
        .output()
        .unwrap();
    let after = damon_state();
    let _ = busy.kill();
    let _ = busy.wait();
    assert_eq!(before, after, "the kdamonds changed");
    let message = stderr(&output);
    match output.status.code() {
        Some(0) => {
            let doc: Value = serde_json::from_slice(&output.stdout).unwrap();
            assert_eq!(doc["schema"], "numasleuth.hotpages/1");
            assert!(doc["damon"]["snapshots"].as_u64() >= Some(1), "{doc}");
        }
        Some(2) => {
            assert_eq!(message.lines().count(), 1, "{message}");
            assert!(message.starts_with("numasleuth: error: "), "{message}");
            assert!(NOT_HERE.iter().any(|m| message.contains(m)), "{message}");
            assert!(output.stdout.is_empty());
        }
        other => panic!("hotpages exited {other:?}: {message}"),
    }
    // On the development VM itself: the reason is the missing vaddr.
    let avail = fs::read_to_string(format!("{KDAMONDS}/0/contexts/0/avail_operations")).unwrap_or_default();
    if !avail.is_empty() && !avail.contains("vaddr") {
        assert!(message.contains("avail_operations: paddr"), "{message}");
    }
}

#[test]
fn without_root_it_says_so_in_one_line() {
    require_root("it runs numasleuth as another user");
    let output = Command::new("setpriv")
        .args(["--reuid=65534", "--regid=65534", "--clear-groups"])
        .arg(assert_cmd::cargo::cargo_bin("numasleuth"))
        .args(["hotpages", "-p", &std::process::id().to_string()])
        .output()
        .expect("setpriv (util-linux) runs");
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    let message = stderr(&output);
    assert_eq!(message.lines().count(), 1, "{message}");
    // A kernel without DAMON says that first; with it, reading is root's.
    assert!(
        message.contains("DAMON needs root") || message.contains("no DAMON sysfs interface"),
        "{message}"
    );
}

#[test]
fn bad_processes_and_snapshots_are_refused() {
    for (args, want) in [
        (vec!["hotpages", "-p", "4194303"], "no such process"),
        (vec!["hotpages", "-p", "2"], "kernel thread"),
    ] {
        let out = numasleuth().args(&args).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(stderr(&out).contains(want), "{args:?}: {}", stderr(&out));
    }
    let tree = common::tree_with(&[]);
    let out = numasleuth()
        .arg("--root")
        .arg(tree.path())
        .args(["hotpages", "-p", "1"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("--root names a snapshot"), "{}", stderr(&out));
    for duration in ["500ms", "2h"] {
        let out = numasleuth()
            .args(["hotpages", "-p", "1", "--duration", duration])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "--duration {duration}");
    }
}

#[test]
fn the_reaper_waits_for_its_pipe_and_touches_nothing_without_a_claim() {
    let claims = tempfile::tempdir().unwrap();
    let before = damon_state();
    let mut reaper = Command::new(assert_cmd::cargo::cargo_bin("numasleuth"))
        .args(["damon-reaper", "--claims"])
        .arg(claims.path())
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // It waits while the pipe is open.
    std::thread::sleep(std::time::Duration::from_millis(300));
    assert!(
        reaper.try_wait().unwrap().is_none(),
        "the reaper did not wait for its pipe"
    );
    reaper.stdin.take().unwrap().write_all(b"").unwrap();
    let out = reaper.wait_with_output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(before, damon_state());
    // Hidden: not a command people are offered.
    let help = numasleuth().arg("--help").output().unwrap();
    assert!(!String::from_utf8_lossy(&help.stdout).contains("damon-reaper"));
}
