//! `numasleuth lines`: the victim's hot global and its innocent neighbour on
//! one cache line, link-time and run-time, and the clear errors.

use crate::common;
use crate::victim_build;

use common::{numasleuth, stderr};
use serde_json::Value;

fn lines_json(args: &[&str]) -> Value {
    let output = numasleuth().arg("lines").args(args).arg("--json").output().unwrap();
    assert!(output.status.success(), "{}", stderr(&output));
    serde_json::from_slice(&output.stdout).unwrap()
}

fn line_names(line: &Value) -> Vec<String> {
    line["symbols"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["name"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn nil_root_and_log_level_share_a_line() {
    let dir = tempfile::tempdir().unwrap();
    let victim = victim_build::build(dir.path(), "victim", &[]);
    let doc = lines_json(&[victim.to_str().unwrap()]);
    assert_eq!(doc["schema"], "numasleuth.lines/1");
    assert_eq!(doc["line_size"], 64);
    let lines = doc["lines"].as_array().unwrap();
    let shared = lines
        .iter()
        .find(|l| line_names(l).contains(&"nil_root".to_string()))
        .expect("a shared line holds nil_root");
    assert!(line_names(shared).contains(&"log_level".to_string()), "{shared}");
    let nil = &shared["symbols"][0];
    assert_eq!(
        (nil["name"].as_str(), nil["size"].as_u64(), nil["section"].as_str()),
        (Some("nil_root"), Some(8), Some(".bss"))
    );
    assert!(shared["address"].as_str().unwrap().starts_with("0x"));
    // Text names both, one line.
    let output = numasleuth().args(["lines", victim.to_str().unwrap()]).output().unwrap();
    let text = String::from_utf8_lossy(&output.stdout);
    assert!(text.contains("nil_root") && text.contains("log_level"), "{text}");
}

#[test]
fn symbol_shows_its_line_and_neighbours_at_run_time() {
    let dir = tempfile::tempdir().unwrap();
    let binary = victim_build::build(dir.path(), "victim", &[]);
    let victim = victim_build::start(&binary, &["--workers", "1", "--seconds", "20"]);
    let pid = victim.pid.to_string();
    let doc = lines_json(&["--pid", &pid, "--symbol", "log_level"]);
    assert_eq!(doc["pid"], victim.pid);
    assert_eq!(doc["symbol"]["name"], "log_level");
    assert_eq!(doc["symbol"]["address"], format!("{:#x}", victim.log_level));
    let lines = doc["lines"].as_array().unwrap();
    assert_eq!(lines.len(), 3, "the line and one either side: {doc}");
    assert_eq!(lines[1]["address"], format!("{:#x}", victim.nil_root & !63));
    assert!(line_names(&lines[1]).contains(&"nil_root".to_string()));
    // Linking time addresses differ from run time ones for a PIE.
    let link = lines_json(&[binary.to_str().unwrap(), "--symbol", "nil_root"]);
    assert_ne!(link["symbol"]["address"], format!("{:#x}", victim.nil_root));
}

#[test]
fn clear_errors() {
    let dir = tempfile::tempdir().unwrap();
    let binary = victim_build::build(dir.path(), "victim", &[]);
    let bin = binary.to_str().unwrap();
    let output = numasleuth()
        .args(["lines", bin, "--symbol", "no_such_global"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert!(
        stderr(&output).starts_with("numasleuth: error: symbol `no_such_global` not found among the"),
        "{}",
        stderr(&output)
    );
    let output = numasleuth().args(["lines", bin, "--symbol", "main"]).output().unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert!(
        stderr(&output).contains("is in .text, not in .data .bss .tdata .tbss"),
        "{}",
        stderr(&output)
    );
    let script = dir.path().join("notelf");
    std::fs::write(&script, "plain text\n").unwrap();
    let output = numasleuth().args(["lines", script.to_str().unwrap()]).output().unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert!(stderr(&output).contains("not an ELF file"), "{}", stderr(&output));
    let output = numasleuth().args(["lines", "/nonexistent/app"]).output().unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert_eq!(stderr(&output), "numasleuth: error: /nonexistent/app: not found\n");
    let output = numasleuth().args(["lines", bin, "--line-size", "96"]).output().unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert!(stderr(&output).contains("power of two"));
    let output = numasleuth().args(["lines", "--pid", "4194303"]).output().unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert!(
        stderr(&output).contains("no such process: 4194303"),
        "{}",
        stderr(&output)
    );
}
