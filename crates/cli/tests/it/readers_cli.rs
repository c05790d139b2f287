//! `numasleuth readers` on this machine (a kernel without a kprobe PMU, so
//! the open tracepoints): a long-lived shell that opens /proc/slabinfo
//! every 200 ms is found with its parent, one opening /proc/meminfo is
//! not; a loop of short-lived `cat`s is one reader with every open
//! counted; the /proc/*/fd scan finds a held file and says it is sampled;
//! bad input and an unprivileged user get one line and exit 2; and the
//! same opens reach `probe-latency --readers`, `doctor --measure` and
//! `serve`. The kprobe method is covered by the 6.12 guest
//! (crates/testbed/tests/it/readers_guest.rs).

use crate::common;

use std::os::unix::process::CommandExt;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use common::exporter::{get, sample, Exporter};
use common::{exit_2_stderr, numasleuth, require_root, stderr};
use serde_json::Value;

/// `script` run by a shell of its own, under a parent shell of its own:
/// readers are grouped by command and parent, so the tests running at
/// once (all children of this test binary) stay apart by that parent.
/// Killed, with everything it started, when dropped.
struct Loop(Child);

impl Loop {
    fn running(script: &str) -> Loop {
        let quoted = script.replace('\'', "'\\''");
        Loop(
            Command::new("sh")
                .args(["-c", &format!("sh -c '{quoted}' & wait")])
                .stdout(Stdio::null())
                .process_group(0)
                .spawn()
                .unwrap(),
        )
    }

    /// A shell that opens `file` every 200 ms itself (`read < file` is
    /// done by the shell, so the opener keeps one PID).
    fn reading(file: &str) -> Loop {
        Loop::running(&format!("while :; do read -r line < {file}; sleep 0.2; done"))
    }

    /// The parent of the reading shell.
    fn parent(&self) -> u64 {
        u64::from(self.0.id())
    }
}

impl Drop for Loop {
    fn drop(&mut self) {
        // SAFETY: kill() of the process group this test started.
        unsafe { libc::kill(-(self.0.id() as i32), libc::SIGKILL) };
        let _ = self.0.wait();
    }
}

fn mount_tracefs() {
    if std::path::Path::new("/sys/kernel/tracing/events/syscalls").exists() {
        return;
    }
    // Test setup, as root: numasleuth itself never mounts anything.
    let status = Command::new("mount")
        .args(["-t", "tracefs", "nodev", "/sys/kernel/tracing"])
        .status()
        .unwrap();
    assert!(status.success(), "mount tracefs");
}

fn readers_json(args: &[&str]) -> Value {
    let output = numasleuth().arg("readers").args(args).arg("--json").output().unwrap();
    assert!(output.status.success(), "{}", stderr(&output));
    serde_json::from_slice(&output.stdout).unwrap()
}

/// The reader started by `parent`.
fn reader_of(readers: &Value, parent: u64) -> Option<&Value> {
    readers
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["parents"][0]["pid"].as_u64() == Some(parent))
}

#[test]
fn a_long_lived_slabinfo_reader_is_found_and_a_meminfo_reader_is_not() {
    require_root("it opens system-wide perf events");
    mount_tracefs();
    let slab = Loop::reading("/proc/slabinfo");
    let mem = Loop::reading("/proc/meminfo");
    for method in ["tracepoint", "auto"] {
        let doc = readers_json(&["--duration", "3s", "--method", method]);
        assert_eq!(doc["schema"], "numasleuth.readers/1");
        if method == "tracepoint" {
            assert_eq!(doc["method"]["kind"], "tracepoint", "{doc:#}");
        }
        let found =
            reader_of(&doc["readers"], slab.parent()).unwrap_or_else(|| panic!("slabinfo reader not found: {doc:#}"));
        assert_eq!(
            (found["comm"].as_str(), found["processes"].as_u64()),
            (Some("sh"), Some(1))
        );
        // Every 200 ms plus the loop's own fork of `sleep`: 3 s hold 12 to 15.
        let opens = found["opens"].as_u64().unwrap();
        assert!((10..=16).contains(&opens), "{opens} opens: {found:#}");
        assert_eq!(found["files"][0]["file"], "slabinfo");
        // The chain goes on up to this test.
        let me = u64::from(std::process::id());
        assert_eq!(found["parents"][1]["pid"].as_u64(), Some(me), "{found:#}");
        assert!(found["cmdline"].as_str().unwrap().contains("/proc/slabinfo"));
        assert!(
            reader_of(&doc["readers"], mem.parent()).is_none(),
            "the meminfo reader was listed: {doc:#}"
        );
        let findings = doc["findings"].as_array().unwrap();
        assert!(findings.iter().any(|f| f["id"] == "lock-taking-reader"), "{doc:#}");
    }
}

#[test]
fn a_loop_of_short_lived_cats_is_one_reader_with_every_open() {
    require_root("it opens system-wide perf events");
    mount_tracefs();
    let watcher = Command::new(assert_cmd::cargo::cargo_bin("numasleuth"))
        .args(["readers", "--duration", "5s", "--files", "slabinfo", "--json"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Let it open its events (a few ms; a second is generous), then run
    // ten `cat`s, all inside the window.
    std::thread::sleep(Duration::from_secs(1));
    let script = "n=0; while [ $n -lt 10 ]; do cat /proc/slabinfo >/dev/null; n=$((n+1)); sleep 0.2; done";
    let looped = Command::new("sh").args(["-c", script]).spawn().unwrap();
    let loop_pid = u64::from(looped.id());
    assert!(looped.wait_with_output().unwrap().status.success());
    let output = watcher.wait_with_output().unwrap();
    assert!(output.status.success(), "{}", stderr(&output));
    let doc: Value = serde_json::from_slice(&output.stdout).unwrap();
    let ours: Vec<&Value> = doc["readers"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["parents"][0]["pid"].as_u64() == Some(loop_pid))
        .collect();
    // Every one named `cat`, none `?` (named from its exec record when it
    // exited before it could be asked).
    let cats: Vec<&Value> = ours.iter().copied().filter(|r| r["comm"] == "cat").collect();
    assert_eq!((ours.len(), cats.len()), (1, 1), "{doc:#}");
    let opens = cats[0]["opens"].as_u64().unwrap();
    assert!((9..=11).contains(&opens), "{opens} opens of the loop's 10: {doc:#}");
    assert_eq!(cats[0]["processes"], cats[0]["opens"]);
    assert_eq!(cats[0]["parents"][0]["comm"], "sh");
}

#[test]
fn the_fd_scan_sees_a_held_file_and_says_it_is_sampled() {
    require_root("it reads other processes' fd directories");
    // `exec 3<` keeps the file open in the shell for 30 s.
    let holder = Loop::running("exec 3</proc/pagetypeinfo; sleep 30");
    std::thread::sleep(Duration::from_millis(200));
    let doc = readers_json(&["--duration", "500ms", "--method", "fd-scan"]);
    assert_eq!(doc["method"]["kind"], "fd-scan", "{doc:#}");
    assert_eq!(doc["method"]["interval_ms"], 100);
    let found = reader_of(&doc["readers"], holder.parent()).unwrap_or_else(|| panic!("holder not found: {doc:#}"));
    assert_eq!(found["comm"], "sh");
    assert_eq!(found["opens"], 1, "held across scans: one open");
    assert_eq!(found["files"][0]["file"], "pagetypeinfo");
    let output = numasleuth()
        .args(["readers", "--duration", "500ms", "--method", "fd-scan"])
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&output.stdout).contains("SAMPLED view"));
}

#[test]
fn bad_input_is_one_line_and_exit_2() {
    for (args, says) in [
        (vec!["readers", "--files", "meminfo"], "is not a file readers watches"),
        (
            vec!["readers", "--files", "slabinfo,/etc/passwd"],
            "is not a file readers watches",
        ),
        (vec!["readers", "--duration", "0"], "has no unit"),
        (vec!["readers", "--duration", "0s"], "from 100ms to 1h"),
        (vec!["readers", "--method", "ebpf"], "invalid value"),
    ] {
        let err = exit_2_stderr(&args);
        assert!(err.contains(says), "{args:?}: {err}");
    }
    let err = exit_2_stderr(&["--root", "/nonexistent-root", "readers"]);
    assert_eq!(err.lines().count(), 1, "{err}");
}

#[test]
fn as_nobody_it_says_what_is_missing() {
    require_root("it runs numasleuth as another user");
    let output = Command::new("setpriv")
        .args(["--reuid=65534", "--regid=65534", "--clear-groups"])
        .arg(assert_cmd::cargo::cargo_bin("numasleuth"))
        .args(["readers", "--duration", "200ms"])
        .output()
        .unwrap();
    let err = stderr(&output);
    assert_eq!(output.status.code(), Some(2), "{err}");
    let last = err.lines().last().unwrap_or_default();
    assert!(last.starts_with("numasleuth: error: cannot see who opens"), "{err}");
    assert!(last.contains("needs root"), "{err}");
    assert_eq!(
        err.lines().filter(|l| l.starts_with("numasleuth: error")).count(),
        1,
        "{err}"
    );
}

#[test]
fn probe_latency_records_the_reads_with_their_times() {
    require_root("it opens system-wide perf events");
    mount_tracefs();
    let slab = Loop::reading("/proc/slabinfo");
    let output = numasleuth()
        .args(["probe-latency", "--duration", "2s", "--rate", "200/s", "--json"])
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", stderr(&output));
    let doc: Value = serde_json::from_slice(&output.stdout).unwrap();
    let reads = &doc["readers"];
    assert!(reads.is_object(), "{doc:#}");
    let reader = reader_of(&reads["readers"], slab.parent()).unwrap_or_else(|| panic!("{reads:#}"));
    let pid = reader["pids"][0].as_u64();
    let ours: Vec<f64> = reads["opens"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|o| o["pid"].as_u64() == pid)
        .map(|o| o["t_s"].as_f64().unwrap())
        .collect();
    assert!(ours.len() >= 6, "{reads:#}");
    assert!(ours.iter().all(|t| (0.0..=3.0).contains(t)), "{ours:?}");
    assert!(doc["spikes"]
        .as_array()
        .unwrap()
        .iter()
        .all(|s| s["readers"].is_array()));
    // Asked not to: nothing recorded, and said so.
    let output = numasleuth()
        .args(["probe-latency", "--duration", "200ms", "--no-readers", "--json"])
        .output()
        .unwrap();
    let doc: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert!(doc["readers"].is_null() && doc["readers_note"].is_string(), "{doc:#}");
}

#[test]
fn serve_counts_lock_file_opens_by_command() {
    require_root("it opens system-wide perf events");
    mount_tracefs();
    let exporter = Exporter::start(&["--interval", "1s"]);
    let status = Command::new("sh")
        .args(["-c", "for i in 1 2 3; do cat /proc/slabinfo >/dev/null; done"])
        .status()
        .unwrap();
    assert!(status.success());
    // The counting thread reads its rings every 20 ms at most.
    std::thread::sleep(Duration::from_millis(300));
    let (code, text) = get(exporter.addr, "/metrics").expect("no answer");
    assert_eq!(code, 200);
    let cats = sample(
        &text,
        "numasleuth_lock_file_opens_total{file=\"slabinfo\",comm=\"cat\"}",
    );
    assert!(cats.is_some_and(|n| n >= 3.0), "{text}");
}

#[test]
fn doctor_measure_raises_it_for_the_reader_and_not_for_the_meminfo_one() {
    require_root("it opens system-wide perf events");
    mount_tracefs();
    let slab = Loop::reading("/proc/slabinfo");
    let mem = Loop::reading("/proc/meminfo");
    let output = numasleuth().args(["doctor", "--measure", "--json"]).output().unwrap();
    assert!(output.status.success(), "{}", stderr(&output));
    let doc: Value = serde_json::from_slice(&output.stdout).unwrap();
    let found = doc["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["id"] == "lock-taking-reader")
        .unwrap_or_else(|| panic!("no lock-taking-reader: {doc:#}"));
    assert_eq!(found["severity"], "warning");
    let evidence = found["evidence"].as_array().unwrap();
    let parent_of = |e: &Value| e["values"]["parent_pid"].as_u64();
    assert!(
        evidence.iter().any(|e| parent_of(e) == Some(slab.parent())),
        "{found:#}"
    );
    assert!(
        !evidence.iter().any(|e| parent_of(e) == Some(mem.parent())),
        "{found:#}"
    );
    assert!(found["remedy"].as_str().unwrap().contains("/proc/meminfo"));
}
