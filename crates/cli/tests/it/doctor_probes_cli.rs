//! `doctor -p PID` runs the cheap live probes: a two-thread program that
//! updates adjacent counters (`tests/victim/packed.c`) gets `false-sharing`
//! with its symbol and the `watch` command that confirms it, in text, JSON
//! and HTML; its padded twin (`padded.c`) gets no cache-line finding;
//! `--quick` skips the probes and says so.

use crate::common;

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};

use common::{numasleuth, stderr};
use serde_json::Value;

/// A built and started victim; killed when dropped.
struct Running(Child, u32);

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn start(dir: &Path, name: &str) -> Running {
    let source = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("../../tests/victim/{name}.c"));
    let out = dir.join(name);
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
    assert!(line.starts_with(&format!("{name} pid={pid} ")), "{line}");
    Running(child, pid)
}

fn doctor(pid: u32, extra: &[&str]) -> Value {
    let out = numasleuth()
        .args(["doctor", "-p", &pid.to_string(), "--json"])
        .args(extra)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    serde_json::from_slice(&out.stdout).unwrap()
}

fn ids(doc: &Value) -> Vec<String> {
    doc["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["id"].as_str().unwrap().to_string())
        .collect()
}

fn ran(doc: &Value, check: &str) -> bool {
    doc["checks_run"].as_array().unwrap().iter().any(|c| c == check)
}

#[test]
fn packed_counters_are_false_sharing_and_the_padded_twin_is_clean() {
    let dir = tempfile::tempdir().unwrap();
    let packed = start(dir.path(), "packed");
    let doc = doctor(packed.1, &[]);
    assert!(
        ran(&doc, "process-cache-lines") && ran(&doc, "process-migrations"),
        "{doc:#}"
    );
    let finding = doc["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["id"] == "false-sharing")
        .unwrap_or_else(|| panic!("no false-sharing: {doc:#}"));
    assert!(finding["title"].as_str().unwrap().contains("(counters)"), "{finding:#}");
    let confirm = format!("numasleuth watch -p {} --symbol counters", packed.1);
    assert!(finding["remedy"].as_str().unwrap().contains(&confirm), "{finding:#}");

    // The HTML report shows the same finding and what to run next.
    let html = dir.path().join("r.html");
    let out = numasleuth()
        .args(["doctor", "-p", &packed.1.to_string(), "-o"])
        .arg(&html)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(
        page.contains("false-sharing") && page.contains(&confirm),
        "the HTML report"
    );
    drop(packed);

    let padded = start(dir.path(), "padded");
    let doc = doctor(padded.1, &[]);
    assert!(ran(&doc, "process-cache-lines"), "{doc:#}");
    let found = ids(&doc);
    assert!(
        !found.iter().any(|id| id == "false-sharing" || id == "contended-line"),
        "{found:?}"
    );
}

#[test]
fn quick_skips_the_live_probes_and_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let packed = start(dir.path(), "packed");
    let started = std::time::Instant::now();
    let doc = doctor(packed.1, &["--quick"]);
    assert!(started.elapsed().as_secs() < 30, "a hang guard");
    assert!(
        ran(&doc, "process-placement") && !ran(&doc, "process-cache-lines"),
        "{doc:#}"
    );
    let skipped = doc["checks_skipped"].to_string();
    assert!(skipped.contains("--quick skips the live probes"), "{skipped}");
    assert!(!ids(&doc).iter().any(|id| id == "false-sharing"));
}
