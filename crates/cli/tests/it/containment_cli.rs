//! Child processes are contained: what `runs`, `pmu -- CMD` and `bisect`'s
//! metric command start runs in a process group of its own, which is
//! killed on timeout, on Ctrl-C (SIGINT to numasleuth, whose stop token
//! ends the group) and when the command ends. Each workload forks a
//! background `sleep` of a length no other test uses, and afterwards no
//! process with that length in its command line may be left.

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use numasleuth_kernel::test_support::{running_with, surviving};

use crate::common::{self, numasleuth, stderr};

/// numasleuth itself is handed the marker as an argument: not a survivor.
const BESIDES: &[&str] = &["numasleuth"];

/// Waits (bounded) until a process with `marker` runs: the workload has
/// started and forked.
fn wait_for(marker: &str) {
    let deadline = Instant::now() + Duration::from_secs(30);
    while running_with(marker, BESIDES).is_empty() {
        assert!(Instant::now() < deadline, "the workload with {marker} never started");
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn runs_timeout_leaves_no_descendant() {
    let out = numasleuth()
        .args([
            "runs",
            "-n",
            "4",
            "--timeout",
            "1s",
            "--",
            "sh",
            "-c",
            "sleep 77.1111 & sleep 78.1111",
        ])
        .timeout(Duration::from_secs(60))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("did not finish within --timeout"),
        "{}",
        stderr(&out)
    );
    assert_eq!(surviving(".1111", BESIDES), Vec::<String>::new());
}

#[test]
fn runs_ctrl_c_kills_the_workloads_group_and_reports_what_finished() {
    let bin = assert_cmd::cargo::cargo_bin("numasleuth");
    // The first run ends by itself; the second forks and hangs.
    let script = "if [ -e \"$0\" ]; then sleep 77.2222 & sleep 78.2222; else : > \"$0\"; fi";
    let flag = tempfile::tempdir().unwrap();
    let mut child = common::default_sigint(&mut Command::new(bin))
        .args(["runs", "-n", "4", "--json", "--", "sh", "-c", script])
        .arg(flag.path().join("ran-once"))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    wait_for("78.2222");
    // SAFETY: kill has no memory effects; the PID is our unreaped child.
    unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGINT) };
    let deadline = Instant::now() + Duration::from_secs(30);
    while child.try_wait().unwrap().is_none() {
        assert!(Instant::now() < deadline, "runs did not stop on SIGINT");
        std::thread::sleep(Duration::from_millis(20));
    }
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["runs"].as_array().map(Vec::len), Some(1), "{doc:#}");
    assert!(doc.to_string().contains("stopped by a signal"), "{doc:#}");
    assert_eq!(surviving(".2222", BESIDES), Vec::<String>::new());
}

#[test]
fn pmu_command_leaves_no_descendant() {
    let out = numasleuth()
        .args(["pmu", "--json", "--", "sh", "-c", "sleep 77.3333 & echo done"])
        .timeout(Duration::from_secs(60))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(surviving("77.3333", BESIDES), Vec::<String>::new());
}
