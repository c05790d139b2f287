//! Ctrl-C keeps what was measured: every command that runs over time gets
//! a real SIGINT, sent to its process group as a terminal sends it, once it
//! is catching the signal (its `SigCgt` mask says so), and must print its
//! report marked "stopped after …", write every `-o` file and exit 0. A
//! second SIGINT while the first is still being handled exits at once
//! with 130.

use crate::common;
use crate::victim_build;

use std::io::{BufRead, BufReader};
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

/// Starts numasleuth in its own process group, in `dir`.
fn start(dir: &Path, args: &[&str]) -> Child {
    common::default_sigint(&mut Command::new(env!("CARGO_BIN_EXE_numasleuth")))
        .args(args)
        .current_dir(dir)
        .process_group(0)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start numasleuth")
}

/// Whether `pid` has a handler for SIGINT, from /proc/PID/status.
fn catches_sigint(pid: u32) -> bool {
    let Ok(status) = std::fs::read_to_string(format!("/proc/{pid}/status")) else {
        return false;
    };
    status
        .lines()
        .find_map(|l| l.strip_prefix("SigCgt:"))
        .and_then(|mask| u64::from_str_radix(mask.trim(), 16).ok())
        .is_some_and(|mask| mask & (1 << (libc::SIGINT - 1)) != 0)
}

/// Waits until the command catches SIGINT, lets it work for `work`, then
/// sends SIGINT to its whole process group, as Ctrl-C in a terminal does.
fn interrupt_after(child: &Child, work: Duration) {
    let pid = child.id();
    let waited = Instant::now();
    while !catches_sigint(pid) {
        assert!(
            waited.elapsed() < Duration::from_secs(120),
            "numasleuth never caught SIGINT"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    std::thread::sleep(work);
    // SAFETY: a signal to the process group of our own unwaited child.
    assert_eq!(unsafe { libc::kill(-(pid as i32), libc::SIGINT) }, 0);
}

/// Interrupts `args` after `work` and returns what it printed; it must
/// have exited 0.
fn interrupted(dir: &Path, args: &[&str], work: Duration) -> Output {
    let child = start(dir, args);
    interrupt_after(&child, work);
    let output = child.wait_with_output().unwrap();
    assert_eq!(
        output.status.code(),
        Some(0),
        "{args:?}: {}\n{}",
        common::stderr(&output),
        String::from_utf8_lossy(&output.stdout)
    );
    output
}

fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// The run span a JSON file's provenance carries.
fn run_of(path: &Path) -> Value {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let first = text.lines().next().unwrap_or_default();
    // memwatch writes JSON lines, provenance in the first record.
    let doc: Value = serde_json::from_str(&text)
        .or_else(|_| serde_json::from_str(first))
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    doc["provenance"]["run"].clone()
}

/// A process that does nothing for a minute; killed when dropped.
struct Sleeper(Child);

impl Drop for Sleeper {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn sleeper() -> Sleeper {
    Sleeper(Command::new("sleep").arg("60").spawn().unwrap())
}

#[test]
fn hotlines_reports_what_it_sampled() {
    let dir = tempfile::tempdir().unwrap();
    let target = sleeper();
    let pid = target.0.id().to_string();
    let args = ["hotlines", &pid, "--duration", "30s", "-o", "h.json", "-o", "h.txt"];
    let out = interrupted(dir.path(), &args, Duration::from_millis(500));
    let text = stdout(&out);
    assert!(text.contains("stopped after ") && text.contains(" of 30 s"), "{text}");
    assert!(text.contains("hotlines of process"), "{text}");
    let run = run_of(&dir.path().join("h.json"));
    assert_eq!(run["stopped_early"], true, "{run}");
    assert_eq!(run["planned_s"], 30.0);
    assert!(run["ran_s"].as_f64().unwrap() < 30.0);
    let file = std::fs::read_to_string(dir.path().join("h.txt")).unwrap();
    assert!(file.contains("stopped after "), "{file}");
}

#[test]
fn migrations_reports_what_it_followed() {
    let dir = tempfile::tempdir().unwrap();
    let target = sleeper();
    let pid = target.0.id().to_string();
    let args = ["migrations", &pid, "--duration", "30s", "-o", "m.json"];
    let out = interrupted(dir.path(), &args, Duration::from_millis(300));
    assert!(stdout(&out).contains("stopped after "), "{}", stdout(&out));
    assert_eq!(run_of(&dir.path().join("m.json"))["stopped_early"], true);
}

#[test]
fn watch_without_a_duration_runs_until_ctrl_c_and_counts() {
    let dir = tempfile::tempdir().unwrap();
    let binary = victim_build::build(dir.path(), "victim", &[]);
    let victim = victim_build::start(&binary, &["--workers", "1", "--seconds", "60"]);
    let pid = victim.pid.to_string();
    let args = ["watch", &pid, "--symbol", "nil_root", "-o", "w.json"];
    let out = interrupted(dir.path(), &args, Duration::from_millis(800));
    let text = stdout(&out);
    assert!(text.contains("stopped after "), "{text}");
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(dir.path().join("w.json")).unwrap()).unwrap();
    assert!(doc["writes_total"].as_u64().unwrap() > 0, "{doc:#}");
    assert_eq!(doc["provenance"]["run"]["stopped_early"], true);
    // Until Ctrl-C: nothing was planned.
    assert!(doc["provenance"]["run"]["planned_s"].is_null(), "{doc:#}");
}

#[test]
fn pmu_of_a_process_counts_until_ctrl_c() {
    let dir = tempfile::tempdir().unwrap();
    let target = sleeper();
    let pid = target.0.id().to_string();
    let args = ["pmu", "-p", &pid, "--events", "task-clock,page-faults", "-o", "p.json"];
    let out = interrupted(dir.path(), &args, Duration::from_millis(300));
    assert!(stdout(&out).contains("stopped after "), "{}", stdout(&out));
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(dir.path().join("p.json")).unwrap()).unwrap();
    assert!(doc["duration_s"].as_f64().unwrap() > 0.0, "{doc:#}");
    assert_eq!(doc["provenance"]["run"]["stopped_early"], true);
}

#[test]
fn memwatch_writes_its_files_and_cost_summary() {
    let dir = tempfile::tempdir().unwrap();
    let args = [
        "memwatch",
        "--interval",
        "100ms",
        "--duration",
        "30s",
        "-o",
        "x.json",
        "-o",
        "x.svg",
    ];
    let out = interrupted(dir.path(), &args, Duration::from_millis(700));
    let text = stdout(&out);
    assert!(
        text.contains("stopped after ") && text.contains("sampling cost: median"),
        "{text}"
    );
    assert_eq!(run_of(&dir.path().join("x.json"))["stopped_early"], true);
    let json = std::fs::read_to_string(dir.path().join("x.json")).unwrap();
    let summary: Value = serde_json::from_str(json.lines().last().unwrap()).unwrap();
    assert_eq!(summary["type"], "summary");
    assert_eq!(summary["run"]["stopped_early"], true);
    let svg = std::fs::read_to_string(dir.path().join("x.svg")).unwrap();
    assert!(svg.contains("stopped after "), "the chart's footer says so");
}

#[test]
fn mem_reports_the_sizes_it_measured() {
    let dir = tempfile::tempdir().unwrap();
    let args = [
        "mem",
        "latency",
        "--sizes",
        "16K..64M",
        "--samples",
        "40",
        "-o",
        "mem.json",
    ];
    let out = interrupted(dir.path(), &args, Duration::from_millis(500));
    let text = stdout(&out);
    assert!(
        text.contains("stopped after ") && text.contains(" of 13 sizes done"),
        "{text}"
    );
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(dir.path().join("mem.json")).unwrap()).unwrap();
    let points = doc["latency_sweep"]["points"].as_array().unwrap().len();
    let done = doc["provenance"]["run"]["steps"]["done"].as_u64().unwrap() as usize;
    assert_eq!(points, done, "{doc:#}");
    assert!(done < 13);
}

#[test]
fn c2c_reports_on_ctrl_c_after_the_pair_under_way() {
    let dir = tempfile::tempdir().unwrap();
    let args = ["c2c", "--samples", "200", "-o", "c.json"];
    let out = interrupted(dir.path(), &args, Duration::from_millis(200));
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(dir.path().join("c.json")).unwrap()).unwrap();
    let run = &doc["provenance"]["run"];
    let steps = &run["steps"];
    // A pair is measured whole: stopped early only when a pair was left.
    assert_eq!(
        run["stopped_early"],
        steps["done"].as_u64() < steps["planned"].as_u64(),
        "{run}"
    );
    assert_eq!(stdout(&out).contains("stopped after "), run["stopped_early"] == true);
}

#[test]
fn lab_reports_the_configurations_it_ran() {
    let dir = tempfile::tempdir().unwrap();
    let args = [
        "lab",
        "false-sharing",
        "--samples",
        "3",
        "--sample-ms",
        "100",
        "-o",
        "l.json",
        "-o",
        "l.svg",
    ];
    let out = interrupted(dir.path(), &args, Duration::from_millis(600));
    let text = stdout(&out);
    assert!(
        text.contains("stopped after ") && text.contains("configurations done"),
        "{text}"
    );
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(dir.path().join("l.json")).unwrap()).unwrap();
    let steps = &doc["provenance"]["run"]["steps"];
    assert!(steps["done"].as_u64() < steps["planned"].as_u64(), "{steps}");
    assert!(dir.path().join("l.svg").is_file());
}

#[test]
fn runs_leaves_out_the_run_under_way_and_reports_the_rest() {
    let dir = tempfile::tempdir().unwrap();
    let args = ["runs", "-n", "8", "-o", "r.json", "--", "sleep", "1"];
    let mut child = start(dir.path(), &args);
    // Ctrl-C once the second run has started: the first one is whole.
    let stderr = BufReader::new(child.stderr.take().unwrap());
    let mut lines = stderr.lines().map_while(Result::ok);
    let mut seen = String::new();
    for line in lines.by_ref() {
        seen.push_str(&line);
        seen.push('\n');
        if line.contains("run 2/8") {
            break;
        }
    }
    assert!(seen.contains("run 2/8"), "{seen}");
    interrupt_after(&child, Duration::from_millis(200));
    let rest: Vec<String> = lines.collect();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{seen}{rest:?}");
    let text = stdout(&out);
    assert!(
        text.contains("stopped after ") && text.contains("of 8 runs done"),
        "{text}"
    );
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(dir.path().join("r.json")).unwrap()).unwrap();
    let runs = doc["runs"].as_array().unwrap();
    assert!(!runs.is_empty() && runs.len() < 8, "{doc:#}");
    // Only whole runs: each slept its second.
    assert!(runs.iter().all(|r| r["wall_s"].as_f64().unwrap() >= 1.0), "{doc:#}");
    assert!(
        rest.iter()
            .any(|l| l.contains("was stopped before it finished; it is left out")),
        "{rest:?}"
    );
}

#[test]
fn probe_latency_marks_its_report_stopped() {
    let dir = tempfile::tempdir().unwrap();
    let args = ["probe-latency", "--duration", "30s", "--rate", "200", "-o", "pl.json"];
    let out = interrupted(dir.path(), &args, Duration::from_millis(500));
    assert!(stdout(&out).contains("stopped after "), "{}", stdout(&out));
    assert_eq!(run_of(&dir.path().join("pl.json"))["stopped_early"], true);
}

#[test]
fn readers_marks_its_report_stopped() {
    let dir = tempfile::tempdir().unwrap();
    let args = ["readers", "--duration", "30s", "-o", "r.json"];
    let out = interrupted(dir.path(), &args, Duration::from_millis(800));
    assert!(stdout(&out).contains("stopped after "), "{}", stdout(&out));
    assert_eq!(run_of(&dir.path().join("r.json"))["stopped_early"], true);
}

#[test]
fn a_second_ctrl_c_exits_at_once_with_130() {
    let dir = tempfile::tempdir().unwrap();
    // The workload ignores SIGINT and SIGTERM, so the first Ctrl-C leaves
    // runs waiting out its grace before killing it: the second one comes
    // in that window.
    let script = "trap '' INT TERM; sleep 30";
    let child = start(
        dir.path(),
        &["runs", "-n", "4", "-o", "r.json", "--", "sh", "-c", script],
    );
    let pid = child.id() as i32;
    interrupt_after(&child, Duration::from_millis(300));
    std::thread::sleep(Duration::from_millis(300));
    // SAFETY: a signal to the process group of our own unwaited child.
    assert_eq!(unsafe { libc::kill(-pid, libc::SIGINT) }, 0);
    let started = Instant::now();
    let output = child.wait_with_output().unwrap();
    assert_eq!(output.status.code(), Some(130), "{}", common::stderr(&output));
    // A hang guard, not a timing: well before the workload's 30 s.
    assert!(started.elapsed() < Duration::from_secs(20));
    assert!(!dir.path().join("r.json").exists(), "exiting at once writes nothing");
    // The workload was left in our group; end it.
    // SAFETY: SIGKILL to the group we created for the child.
    unsafe { libc::kill(-pid, libc::SIGKILL) };
}
