//! `probe-latency`: the coordinated-omission correction proven on a real
//! stall (the probe process stopped from outside with SIGSTOP), the JSON
//! schema, the file operations' refusal to touch existing data, and bad
//! input.

use crate::common;

use std::io::Read;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::{numasleuth, stderr};
use serde_json::Value;

fn bin() -> std::path::PathBuf {
    assert_cmd::cargo::cargo_bin("numasleuth")
}

fn threads(pid: u32) -> usize {
    std::fs::read_dir(format!("/proc/{pid}/task")).map_or(0, |d| d.count())
}

/// The stall is 300 ms of a process that cannot run at all; at 1000/s
/// about 300 operations queue behind it, i.e. 10% of a 3 s run. These
/// bounds are on what the probe recorded, not on how long the test took:
/// a loaded machine only makes the stall longer.
#[test]
fn a_sigstop_stall_shows_in_corrected_p99_and_not_in_uncorrected_p99() {
    let mut child = Command::new(bin())
        .args(["probe-latency", "--rate", "1000/s", "--duration", "3s", "--json"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id();
    // The memory-signal sampler thread starts right before the schedule:
    // once it exists, the probe is running.
    let waited = Instant::now();
    while threads(pid) < 2 {
        assert!(waited.elapsed() < Duration::from_secs(60), "the probe never started");
        std::thread::sleep(Duration::from_millis(5));
    }
    std::thread::sleep(Duration::from_millis(700));
    // SAFETY: signals to our own child, which has not been waited for.
    assert_eq!(unsafe { libc::kill(pid as i32, libc::SIGSTOP) }, 0);
    std::thread::sleep(Duration::from_millis(300));
    // SAFETY: as above, our own child.
    assert_eq!(unsafe { libc::kill(pid as i32, libc::SIGCONT) }, 0);
    let mut stdout = String::new();
    child.stdout.take().unwrap().read_to_string(&mut stdout).unwrap();
    let status = child.wait().unwrap();
    assert!(status.success(), "{status:?}");
    let v: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(v["schema"], "numasleuth.probe_latency/1");
    assert_eq!(v["corrected"], true);
    assert_eq!(v["rate_per_sec"], 1000);
    assert_eq!(v["samples"], 3000, "{stdout}");
    let corrected = |p: &str| v["percentiles_ns"][p].as_u64().unwrap();
    let uncorrected = |p: &str| v["uncorrected_percentiles_ns"][p].as_u64().unwrap();
    for p in ["50", "90", "99", "99.9", "99.99", "max"] {
        assert!(corrected(p) >= uncorrected(p), "p{p}: {stdout}");
    }
    // The top 1% (30 operations) were queued ~270 ms or more behind the stall.
    assert!(corrected("99") >= 100_000_000, "corrected p99 {} ns", corrected("99"));
    assert!(corrected("max") >= 250_000_000, "corrected max {} ns", corrected("max"));
    // At most the one operation the stop landed in took long itself.
    assert!(
        uncorrected("99") < 30_000_000,
        "uncorrected p99 {} ns",
        uncorrected("99")
    );
    assert!(uncorrected("99") * 4 < corrected("99"));
    // The stall is listed as a spike, at least 250 ms long.
    let spikes = v["spikes"].as_array().unwrap();
    assert!(
        spikes.iter().any(|s| s["latency_ns"].as_u64().unwrap() >= 250_000_000),
        "{stdout}"
    );
    assert!(v["timeline"]["buckets"].as_array().unwrap().len() >= 10);
}

#[test]
fn text_output_shows_both_columns_and_file_ops_clean_up() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("probe.dat");
    let svg = dir.path().join("t.svg");
    let output = numasleuth()
        .args(["probe-latency", "--op", "fsync"])
        .arg(&file)
        .args(["--rate", "50/s", "--duration", "200ms", "--svg"])
        .arg(&svg)
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", stderr(&output));
    let text = String::from_utf8(output.stdout).unwrap();
    assert!(text.contains("fsync 4 KiB to"), "{text}");
    assert!(text.contains("corrected (from intended start)") && text.contains("uncorrected (from actual start)"));
    assert!(text.contains("p99.99") && text.contains("stdev"), "{text}");
    assert!(text.contains(": 10 operations"), "{text}");
    assert!(!file.exists(), "the probe's file was left behind");
    assert!(std::fs::read_to_string(&svg).unwrap().starts_with("<svg"));
}

#[test]
fn existing_files_are_never_written() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("precious");
    std::fs::write(&file, "user data").unwrap();
    for op in ["write", "fsync"] {
        let output = numasleuth()
            .args(["probe-latency", "--duration", "100ms", "--op", op])
            .arg(&file)
            .output()
            .unwrap();
        assert_eq!(output.status.code(), Some(2));
        assert!(stderr(&output).contains("already exists"), "{}", stderr(&output));
    }
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "user data");
    let missing_dir = dir.path().join("no/such/dir/f");
    let output = numasleuth()
        .args(["probe-latency", "--duration", "100ms", "--op", "write"])
        .arg(&missing_dir)
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert!(stderr(&output).contains("cannot create"), "{}", stderr(&output));
}

#[test]
fn bad_input_is_one_clear_line_and_exit_2() {
    let cases: &[(&[&str], &str)] = &[
        (&["--rate", "0"], "from 1 to 1000000"),
        (&["--rate", "0/s"], "from 1 to 1000000"),
        (&["--rate", "5000000/s"], "from 1 to 1000000"),
        (&["--rate", "1e9"], "from 1 to 1000000"),
        (&["--duration", "25h"], "from 10ms to 1 day (24h)"),
        (&["--node", "1023", "--duration", "100ms"], "node 1023 does not exist"),
        (&["--node", "1024"], "from 0 to 1023"),
        (&["--op", "format-disk"], "is not an operation"),
        (&["--op", "write"], "needs a FILE"),
        (&["--op", "alloc-touch", "x"], "takes no FILE"),
        (
            &["--op", "write", "/tmp/numasleuth-never", "--node", "0"],
            "--node applies to --op alloc-touch only",
        ),
    ];
    for (args, expected) in cases {
        let output = numasleuth().arg("probe-latency").args(*args).output().unwrap();
        let err = stderr(&output);
        assert_eq!(output.status.code(), Some(2), "{args:?}: {err}");
        assert!(
            err.starts_with("numasleuth: error: ") && err.contains(expected),
            "{args:?}: {err}"
        );
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
        assert!(output.stdout.is_empty(), "{args:?}");
    }
    let snapshot = common::tree_with(&[]);
    let output = numasleuth()
        .arg("--root")
        .arg(snapshot.path())
        .args(["probe-latency", "--duration", "100ms"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert!(stderr(&output).contains("live system"), "{}", stderr(&output));
}

#[test]
fn sigint_stops_the_probe_which_reports_and_removes_its_file() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("probe.dat");
    let mut child = common::default_sigint(&mut Command::new(bin()))
        .args(["probe-latency", "--rate", "100/s", "--duration", "1h", "--op", "write"])
        .arg(&file)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let waited = Instant::now();
    while std::fs::metadata(&file).map_or(true, |m| m.len() == 0) {
        assert!(waited.elapsed() < Duration::from_secs(60), "the probe never wrote");
        std::thread::sleep(Duration::from_millis(10));
    }
    // SAFETY: a signal to our own child, which has not been waited for.
    assert_eq!(unsafe { libc::kill(child.id() as i32, libc::SIGINT) }, 0);
    let mut stdout = String::new();
    child.stdout.take().unwrap().read_to_string(&mut stdout).unwrap();
    assert!(child.wait().unwrap().success());
    assert!(
        stdout.contains("operations were never issued (interrupted)"),
        "{stdout}"
    );
    assert!(!file.exists(), "the probe's file was left behind");
}
