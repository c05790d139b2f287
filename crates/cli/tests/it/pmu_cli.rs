//! `numasleuth pmu` on this machine: a command counted from exec to exit,
//! a running process for a duration, and every bad input refused with one
//! clear line and exit 2 (`pmu diff` is in `pmu_diff_cli.rs`).
//!
//! On a VM without a hardware PMU the no-PMU note is asserted; on a machine
//! with one, IPC is. Either way the test checks something real.

use crate::common;

use std::time::Duration;

use common::{exit_2_stderr, output, stderr};
use serde_json::Value;

fn events(doc: &Value) -> &Vec<Value> {
    doc["events"].as_array().unwrap()
}

fn event<'a>(doc: &'a Value, name: &str) -> &'a Value {
    events(doc)
        .iter()
        .find(|e| e["name"] == name)
        .unwrap_or_else(|| panic!("{name} not counted: {doc:#}"))
}

#[test]
fn a_command_is_counted_with_software_events_and_its_exit_code() {
    let script = "i=0; while [ $i -lt 3000 ]; do i=$((i+1)); done; exit 3";
    let out = output(&["pmu", "--json", "--", "sh", "-c", script]);
    // The command's status is numasleuth's, as with perf stat.
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    // The kept names of numasleuth.pmu/1.
    assert_eq!(doc["schema"], "numasleuth.pmu/1");
    assert_eq!(doc["target"]["kind"], "command");
    assert_eq!(doc["target"]["argv"][2], script);
    assert_eq!(doc["target"]["exit_code"], 3);
    assert!(doc["duration_s"].as_f64().unwrap() > 0.0);
    let task_clock = event(&doc, "task-clock");
    assert_eq!(task_clock["pmu"], "software");
    assert!(task_clock["value"].as_u64().unwrap() > 0, "{task_clock:#}");
    for e in events(&doc) {
        for key in [
            "name",
            "pmu",
            "value",
            "time_enabled_ns",
            "time_running_ns",
            "scaled_value",
            "scaled",
        ] {
            assert!(e.get(key).is_some(), "{key} missing in {e:#}");
        }
        if e["scaled"] == false {
            assert_eq!(e["scaled_value"].as_f64(), e["value"].as_f64(), "{e:#}");
        }
    }
    for name in [
        "page-faults",
        "context-switches",
        "cpu-migrations",
        "minor-faults",
        "major-faults",
    ] {
        event(&doc, name);
    }
    let notes: Vec<&str> = doc["notes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n.as_str().unwrap())
        .collect();
    assert!(notes.contains(&"the command exited with status 3"), "{notes:?}");
    if doc["hardware_pmu"] == false {
        assert!(doc["ipc"].is_null());
        assert!(
            notes.contains(&"no hardware PMU (virtualised?): IPC unavailable; the software events are still counted"),
            "{notes:?}"
        );
        let cycles = doc["unavailable"]
            .as_array()
            .unwrap()
            .iter()
            .find(|u| u["name"] == "cycles" && u["pmu"] == "hardware")
            .expect("cycles is listed as unavailable");
        assert!(
            cycles["why"].as_str().unwrap().contains("(ENOENT)")
                || cycles["why"].as_str().unwrap().contains("(EOPNOTSUPP)"),
            "{cycles:#}"
        );
    } else {
        assert!(doc["ipc"].as_f64().unwrap() > 0.0, "{doc:#}");
    }
}

#[test]
fn text_goes_to_stdout_and_the_commands_output_to_stderr() {
    let out = output(&[
        "pmu",
        "--events",
        "task-clock,page-faults",
        "--",
        "sh",
        "-c",
        "echo marker-from-cmd",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = String::from_utf8(out.stdout).unwrap();
    // The provenance line, then the report.
    let (provenance, text) = crate::common::provenance_and_report(&text);
    assert!(provenance.contains("live system"), "{provenance}");
    assert!(text.starts_with("pmu: `sh -c 'echo marker-from-cmd'` (pid "), "{text}");
    assert!(text.contains("\n  task-clock  "), "{text}");
    assert!(
        !text.contains("marker-from-cmd\n"),
        "the command's output leaked into the report: {text}"
    );
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(err.contains("marker-from-cmd\n"), "{err}");
    assert!(
        err.contains("numasleuth: counting 2 events on `sh` until it exits"),
        "{err}"
    );
}

#[test]
fn a_running_sleep_is_counted_for_200ms() {
    let mut sleeper = std::process::Command::new("sleep").arg("30").spawn().unwrap();
    let pid = sleeper.id().to_string();
    let out = output(&["pmu", "--pid", &pid, "--duration", "200ms", "--json"]);
    sleeper.kill().unwrap();
    sleeper.wait().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["target"]["kind"], "pid");
    assert_eq!(doc["target"]["pid"].to_string(), pid);
    assert_eq!(doc["target"]["threads_attached"], 1);
    assert_eq!(doc["target"]["process_exited"], false);
    let duration = doc["duration_s"].as_f64().unwrap();
    assert!((0.19..5.0).contains(&duration), "{duration}");
    // A sleeping task runs almost never, so its clock barely moves, but
    // every software event is attached.
    assert_eq!(event(&doc, "task-clock")["threads"], 1);
    event(&doc, "context-switches");
}

/// `pmu --json` of a Python program that touches `mib` MiB, one write per
/// 4 KiB page, into `dir/name`.
#[test]
fn bad_commands_pids_and_flags_are_one_line_errors() {
    let err = exit_2_stderr(&["pmu", "--", "numasleuth-no-such-command", "x"]);
    assert_eq!(
        err,
        "numasleuth: error: cannot run `numasleuth-no-such-command`: command `numasleuth-no-such-command` not found in PATH\n"
    );
    let err = exit_2_stderr(&["pmu", "--pid", "4194304", "--duration", "100ms"]);
    assert_eq!(
        err,
        "numasleuth: error: no such process: 4194304 (it does not exist or has exited)\n"
    );
    for (args, says) in [
        (vec!["pmu"], "required arguments were not provided"),
        (vec!["pmu", "--pid", "1", "--duration", "1e23s"], "from 10ms to 7 days"),
        (vec!["pmu", "--pid", "0", "--duration", "1s"], "from 1 to 4194304"),
        (vec!["pmu", "--events", "", "--", "true"], "is not an event name"),
        (
            vec!["pmu", "--events", "cycels", "--", "true"],
            "unknown event `cycels`",
        ),
        (
            vec!["pmu", "--pid", "1", "--duration", "1s", "--", "true"],
            "cannot be used with",
        ),
    ] {
        let err = exit_2_stderr(&args);
        assert!(
            err.starts_with("numasleuth: error: ") && err.contains(says),
            "{args:?}: {err}"
        );
    }
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().to_str().unwrap();
    std::fs::create_dir_all(dir.path().join("proc")).unwrap();
    let err = exit_2_stderr(&["--root", root, "pmu", "--", "true"]);
    assert!(err.contains("pmu counts events on the live system"), "{err}");
}

#[test]
fn another_users_process_is_refused_with_the_reason() {
    common::require_root("it runs numasleuth as another user");
    let mut sleeper = std::process::Command::new("sleep").arg("30").spawn().unwrap();
    let out = std::process::Command::new("setpriv")
        .args(["--reuid=65534", "--regid=65534", "--clear-groups"])
        .arg(assert_cmd::cargo::cargo_bin("numasleuth"))
        .args(["pmu", "--pid", &sleeper.id().to_string(), "--duration", "100ms"])
        .output()
        .expect("setpriv (util-linux) runs");
    sleeper.kill().unwrap();
    sleeper.wait().unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let err = stderr(&out);
    let last = err.lines().last().unwrap();
    assert!(last.starts_with("numasleuth: error: none of the "), "{err}");
    assert!(last.contains(" events could be counted; "), "{err}");
    assert!(
        last.contains(": permission denied (EACCES): kernel.perf_event_paranoid is"),
        "{err}"
    );
    assert!(last.contains("ptrace rights"), "{err}");
}

#[test]
fn ctrl_c_stops_the_command_and_the_report_still_comes() {
    use std::os::unix::process::CommandExt;
    // Its own process group, like a shell's foreground job, so the SIGINT
    // reaches numasleuth and the command both, as Ctrl-C would.
    let child = common::default_sigint(&mut std::process::Command::new(assert_cmd::cargo::cargo_bin(
        "numasleuth",
    )))
    .args(["pmu", "--json", "--events", "task-clock", "--", "sleep", "30"])
    .process_group(0)
    .stdout(std::process::Stdio::piped())
    .stderr(std::process::Stdio::piped())
    .spawn()
    .unwrap();
    let group = child.id() as libc::pid_t;
    // Wait until the command is running under numasleuth.
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    let has_child =
        || std::fs::read_to_string(format!("/proc/{group}/task/{group}/children")).is_ok_and(|c| !c.trim().is_empty());
    while !has_child() && std::time::Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    std::thread::sleep(Duration::from_millis(200));
    // SAFETY: signals our own child's process group.
    assert_eq!(unsafe { libc::killpg(group, libc::SIGINT) }, 0);
    let out = child.wait_with_output().unwrap();
    // The command died of the SIGINT passed on: 128 + 2, as a shell says.
    assert_eq!(out.status.code(), Some(130), "{}", stderr(&out));
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["target"]["signal"], libc::SIGINT, "{doc:#}");
    assert!(doc["duration_s"].as_f64().unwrap() < 20.0);
}

#[test]
fn the_commands_exit_status_is_passed_on_and_an_error_of_numasleuth_is_2() {
    let status = |command: &[&str]| {
        let mut args = vec!["pmu", "--events", "task-clock", "--"];
        args.extend_from_slice(command);
        let out = output(&args);
        // The report comes whatever the command's status.
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(text.contains("task-clock"), "{command:?}: {text}{}", stderr(&out));
        out.status.code()
    };
    assert_eq!(status(&["true"]), Some(0));
    assert_eq!(status(&["false"]), Some(1));
    assert_eq!(status(&["sh", "-c", "exit 255"]), Some(255));
    // Killed by a signal: 128 + its number, as shells report it.
    assert_eq!(status(&["sh", "-c", "kill -TERM $$"]), Some(128 + libc::SIGTERM));
    assert_eq!(status(&["sh", "-c", "kill -KILL $$"]), Some(128 + libc::SIGKILL));
    // numasleuth's own failure wins over the command's status: before
    // the command runs, and after it (its report's directory is gone).
    exit_2_stderr(&["pmu", "--events", "no-such-event", "--", "false"]);
    let dir = tempfile::tempdir().unwrap();
    let report = dir.path().join("out").join("pmu.json");
    std::fs::create_dir(report.parent().unwrap()).unwrap();
    let remove = format!("rm -r '{}'; exit 1", report.parent().unwrap().display());
    let err = exit_2_stderr(&[
        "pmu",
        "--events",
        "task-clock",
        "-o",
        report.to_str().unwrap(),
        "--",
        "sh",
        "-c",
        &remove,
    ]);
    assert!(err.contains("cannot write"), "{err}");
}

#[test]
fn a_closed_pipe_exits_zero() {
    let (status, stderr) = common::run_into_a_closed_pipe(&["pmu", "--json", "--", "true"]);
    assert_eq!(status.code(), Some(0), "{stderr}");
    assert!(!stderr.contains("error"), "{stderr}");
}
