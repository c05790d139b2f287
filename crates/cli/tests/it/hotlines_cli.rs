//! `numasleuth hotlines`: the victim's hot global found as the top
//! contended line with writes from both workers (and its false sharing
//! with `log_level`), padded counters found uncontended, a process exiting
//! mid-run reported with what was sampled, and the clear errors.

use crate::common;
use crate::victim_build;

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Stdio};

use common::{exit_2_stderr, json, numasleuth, require_root, stderr};
use serde_json::Value;

fn hotlines(pid: u32, extra: &[&str]) -> Value {
    let pid = pid.to_string();
    let mut args = vec!["hotlines", pid.as_str(), "--json"];
    args.extend_from_slice(extra);
    json(&args)
}

fn strings(v: &Value) -> Vec<String> {
    v.as_array()
        .map(|a| a.iter().filter_map(|s| s.as_str().map(String::from)).collect())
        .unwrap_or_default()
}

#[test]
fn the_victims_hot_global_is_the_top_contended_line() {
    let dir = tempfile::tempdir().unwrap();
    let binary = victim_build::build(dir.path(), "victim", &[]);
    let victim = victim_build::start(&binary, &["--workers", "2", "--worker-cpus", "0-1", "--seconds", "60"]);
    let doc = hotlines(victim.pid, &["--duration", "3s", "--frequency", "10000"]);
    assert_eq!(doc["schema"], "numasleuth.hotlines/1");
    // No precise memory sampling on these VMs: auto falls back and says so.
    assert_eq!(doc["method"], "ip-decode");
    assert!(
        strings(&doc["notes"])[0].starts_with("precise memory sampling not available here"),
        "{doc:#}"
    );
    assert!(doc["samples"].as_u64().unwrap() > 0, "{doc:#}");
    let share = doc["unknown_share"].as_f64().unwrap();
    assert!((0.0..=1.0).contains(&share), "{doc:#}");
    let top = &doc["lines"][0];
    assert_eq!(
        top["address"].as_str().unwrap(),
        format!("{:#x}", victim.nil_root & !63),
        "top line: {doc:#}"
    );
    assert!(strings(&top["symbols"]).contains(&"nil_root".to_string()), "{top:#}");
    assert_eq!(top["contended"], true, "{top:#}");
    assert!(
        top["writer_threads"].as_array().unwrap().len() >= 2,
        "writes from both workers: {top:#}"
    );
    assert!(top["writes"].as_u64().unwrap() > 0 && top["reads"].as_u64().unwrap() > 0);
    assert_eq!(
        top["false_sharing"], true,
        "nil_root shares its line with log_level: {top:#}"
    );
    assert!(strings(&top["symbols"]).contains(&"log_level".to_string()), "{top:#}");
    assert_eq!(top["nodes"], serde_json::json!([0]));
    assert_eq!(
        doc["next_step"].as_str(),
        Some(format!("confirm with `numasleuth watch -p {} --symbol nil_root`", victim.pid).as_str())
    );
}

/// Builds and starts `tests/victim/padded.c`; killed when dropped.
struct Padded(std::process::Child, u32);

impl Drop for Padded {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn padded(dir: &Path) -> Padded {
    let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/victim/padded.c");
    let out = dir.join("padded");
    let status = Command::new("gcc")
        .args(["-O1", "-g", "-pthread"])
        .arg(&source)
        .arg("-o")
        .arg(&out)
        .status()
        .expect("gcc runs (scripts/test-all installs it)");
    assert!(status.success());
    let mut child = Command::new(&out)
        .args(["--workers", "2"])
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.as_mut().unwrap())
        .read_line(&mut line)
        .unwrap();
    let pid = child.id();
    assert!(line.starts_with(&format!("padded pid={pid} ")), "{line}");
    Padded(child, pid)
}

#[test]
fn padded_counters_show_no_contended_line() {
    let dir = tempfile::tempdir().unwrap();
    let program = padded(dir.path());
    let doc = hotlines(program.1, &["--duration", "2s", "--frequency", "10000"]);
    let lines = doc["lines"].as_array().unwrap();
    // Each worker's own counter line is seen, by that worker only.
    let counter_lines: Vec<&Value> = lines
        .iter()
        .filter(|l| strings(&l["symbols"]) == ["counters"])
        .collect();
    assert_eq!(counter_lines.len(), 2, "one line per worker: {doc:#}");
    for line in &counter_lines {
        assert_eq!(line["threads"].as_array().unwrap().len(), 1, "{line:#}");
        assert!(line["writes"].as_u64().unwrap() > 0, "{line:#}");
    }
    let contended: Vec<&Value> = lines.iter().filter(|l| l["contended"] == true).collect();
    assert!(contended.is_empty(), "no line is shared: {contended:#?}");
    assert!(doc["next_step"].is_null());
}

#[test]
fn a_process_exiting_mid_run_reports_what_was_sampled() {
    let dir = tempfile::tempdir().unwrap();
    let binary = victim_build::build(dir.path(), "victim", &[]);
    let mut victim = victim_build::start(&binary, &["--workers", "2", "--seconds", "60"]);
    let mut run = Command::new(assert_cmd::cargo::cargo_bin("numasleuth"))
        .args(["hotlines", &victim.pid.to_string(), "--json", "--duration", "5s"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Its first stderr line is printed as sampling starts; the victim is
    // ended (and reaped) half a second into the sampling.
    let mut started = String::new();
    let mut errors = BufReader::new(run.stderr.take().unwrap());
    errors.read_line(&mut started).unwrap();
    assert!(started.contains("sampling every thread"), "{started}");
    std::thread::sleep(std::time::Duration::from_millis(500));
    victim.child.kill().unwrap();
    victim.child.wait().unwrap();
    let output = run.wait_with_output().unwrap();
    let mut rest = String::new();
    std::io::Read::read_to_string(&mut errors, &mut rest).unwrap();
    assert!(output.status.success(), "{rest}");
    let doc: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(doc["process_exited"], true, "{doc:#}");
    assert!(doc["samples"].as_u64().unwrap() > 0, "{doc:#}");
    assert!(
        doc["duration_s"].as_f64().unwrap() < 5.0,
        "stopped when the process went: {doc:#}"
    );
    let notes = strings(&doc["notes"]).join("\n");
    assert!(
        notes.contains(&format!("process {} exited after", victim.pid)),
        "{notes}"
    );
}

#[test]
fn kernel_threads_missing_processes_and_bad_values_are_clear_errors() {
    let text = exit_2_stderr(&["hotlines", "2", "--duration", "200ms"]);
    assert!(text.contains("process 2 is a kernel thread"), "{text}");
    let text = exit_2_stderr(&["hotlines", "4194304", "--duration", "200ms"]);
    assert!(text.contains("4194304"), "{text}");
    for bad in [
        vec!["--top", "0"],
        vec!["--duration", "50ms"],
        vec!["--duration", "2h"],
        vec!["--frequency", "1000000"],
    ] {
        let mut args = vec!["hotlines", "1"];
        args.extend(bad.iter());
        let text = exit_2_stderr(&args);
        assert!(text.contains("error"), "{args:?}: {text}");
    }
    // This VM has no PEBS, IBS or SPE: asking for precise sampling only is
    // a clear "not available here".
    let text = exit_2_stderr(&["hotlines", "1", "--method", "precise", "--duration", "200ms"]);
    assert!(
        text.contains("precise memory sampling not available here") && text.contains("--method ip-decode"),
        "{text}"
    );
    let snapshot = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(snapshot.path().join("proc/1")).unwrap();
    std::fs::create_dir_all(snapshot.path().join("sys")).unwrap();
    let out = numasleuth()
        .arg("--root")
        .arg(snapshot.path())
        .args(["hotlines", "1"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("needs the live system"), "{}", stderr(&out));
}

#[test]
fn another_users_process_is_refused_with_the_sysctl_named() {
    require_root("it runs numasleuth as another user");
    let dir = tempfile::tempdir().unwrap();
    let binary = victim_build::build(dir.path(), "victim", &[]);
    let victim = victim_build::start(&binary, &["--workers", "1", "--seconds", "30"]);
    let output = Command::new("setpriv")
        .args(["--reuid=65534", "--regid=65534", "--clear-groups"])
        .arg(assert_cmd::cargo::cargo_bin("numasleuth"))
        .args(["hotlines", &victim.pid.to_string(), "--duration", "200ms"])
        .output()
        .expect("setpriv (util-linux) runs");
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    let message = stderr(&output);
    assert!(
        message.contains(&format!("cannot sample process {}: permission denied", victim.pid)),
        "{message}"
    );
    assert!(message.contains("kernel.perf_event_paranoid is"), "{message}");
    assert!(message.contains("`sysctl kernel.perf_event_paranoid=2`"), "{message}");
}
