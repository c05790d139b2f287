//! `numasleuth watch`: the live victim's writes to `nil_root` counted and
//! attributed to `apply_op` at its source lines, the JSON schema, and the
//! clear errors (no such process, unknown symbol, misaligned address,
//! another user's process, all debug registers taken, a snapshot root).

use crate::common;
use crate::victim_build;

use common::{numasleuth, require_root, stderr};
use serde_json::Value;

/// The lines of victim.c that write `nil_root` inside apply_op.
fn writing_lines() -> Vec<u64> {
    let source = std::fs::read_to_string(victim_build::source()).unwrap();
    let lines: Vec<&str> = source.lines().collect();
    let start = lines
        .iter()
        .position(|l| l.starts_with("static uint64_t apply_op("))
        .unwrap();
    let end = start + lines[start..].iter().position(|l| *l == "}").unwrap();
    (start..end)
        .filter(|&i| lines[i].trim_start().starts_with("nil_root = "))
        .map(|i| i as u64 + 1)
        .collect()
}

fn victim(dir: &std::path::Path) -> victim_build::Victim {
    let binary = victim_build::build(dir, "victim", &[]);
    victim_build::start(&binary, &["--workers", "2", "--seconds", "30"])
}

#[test]
fn counts_the_victims_writes_and_names_apply_op() {
    let dir = tempfile::tempdir().unwrap();
    let victim = victim(dir.path());
    let pid = victim.pid.to_string();
    let output = numasleuth()
        .args(["watch", &pid, "--symbol", "nil_root", "--duration", "1s", "--json"])
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", stderr(&output));
    let doc: Value = serde_json::from_slice(&output.stdout).unwrap();
    // The kept names of numasleuth.watch/1.
    assert_eq!(doc["schema"], "numasleuth.watch/1");
    assert_eq!(doc["pid"], victim.pid);
    assert_eq!(doc["address"], format!("{:#x}", victim.nil_root));
    assert_eq!(doc["symbol"], "nil_root");
    assert_eq!(doc["len_bytes"], 8);
    let duration = doc["duration_s"].as_f64().unwrap();
    assert!((0.9..5.0).contains(&duration), "{duration}");
    assert!(doc["writes_total"].as_u64().unwrap() > 0, "{doc:#}");
    assert!(doc["writes_per_sec"].as_f64().unwrap() > 0.0);
    let writers = doc["writers"].as_array().unwrap();
    let top = &writers[0];
    assert_eq!(top["function"], "apply_op", "{doc:#}");
    assert_eq!(top["file"], "victim.c");
    assert!(top["samples"].as_u64().unwrap() > 0);
    let lines = writing_lines();
    assert_eq!(lines.len(), 3, "victim.c writes nil_root 3 times per op");
    for writer in writers.iter().filter(|w| w["function"] == "apply_op") {
        let line = writer["line"].as_u64().unwrap();
        assert!(
            lines.contains(&line),
            "line {line} is not a write of nil_root: {lines:?}"
        );
    }
    // Three writes per operation, each one its own line, in equal numbers.
    assert_eq!(writers.iter().filter(|w| w["function"] == "apply_op").count(), 3);
    let threads = doc["threads"].as_array().unwrap();
    assert_eq!(threads.len(), 3, "main and two workers");
    assert_eq!(
        threads.iter().filter(|t| t["writes"].as_u64() > Some(0)).count(),
        2,
        "only the workers write"
    );

    let output = numasleuth()
        .args(["watch", &pid, "--symbol", "nil_root", "--duration", "500ms"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&output.stdout);
    // The provenance line, then the report.
    let (provenance, text) = crate::common::provenance_and_report(&text);
    assert!(provenance.contains("live system"), "{provenance}");
    assert!(text.starts_with("watch nil_root ("), "{text}");
    assert!(text.contains("apply_op") && text.contains("victim.c:"), "{text}");
    assert!(text.contains("k/s") || text.contains(" /s"), "{text}");
}

#[test]
fn an_address_is_watched_too_and_misalignment_is_explained() {
    let dir = tempfile::tempdir().unwrap();
    let victim = victim(dir.path());
    let (pid, address) = (victim.pid.to_string(), format!("{:#x}", victim.nil_root));
    let output = numasleuth()
        .args([
            "watch",
            &pid,
            "--addr",
            &address,
            "--len",
            "4",
            "--duration",
            "300ms",
            "--json",
        ])
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", stderr(&output));
    let doc: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(doc["symbol"], Value::Null);
    assert_eq!(doc["len_bytes"], 4);
    assert!(doc["writes_total"].as_u64().unwrap() > 0);
    let odd = format!("{:#x}", victim.nil_root + 4);
    let output = numasleuth()
        .args(["watch", &pid, "--addr", &odd, "--len", "8"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert!(
        stderr(&output).contains("is not aligned to 8 bytes"),
        "{}",
        stderr(&output)
    );
}

#[test]
fn no_such_process_and_unknown_symbol() {
    let output = numasleuth()
        .args(["watch", "4194303", "--symbol", "nil_root"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert_eq!(
        stderr(&output),
        "numasleuth: error: no such process: 4194303 (/proc/4194303/stat does not exist)\n"
    );
    let dir = tempfile::tempdir().unwrap();
    let victim = victim(dir.path());
    let output = numasleuth()
        .args(["watch", &victim.pid.to_string(), "--symbol", "no_such_global"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert!(
        stderr(&output).starts_with("numasleuth: error: symbol `no_such_global` not found in "),
        "{}",
        stderr(&output)
    );
    if std::fs::read_to_string("/proc/2/comm").is_ok_and(|c| c.trim() == "kthreadd") {
        let output = numasleuth().args(["watch", "2", "--addr", "0x1000"]).output().unwrap();
        assert_eq!(output.status.code(), Some(2));
        assert!(
            stderr(&output).contains("process 2 is a kernel thread"),
            "{}",
            stderr(&output)
        );
    }
    let fixture = concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/fixtures/qemu-two-nodes");
    for (what, args) in [
        ("watch", vec!["watch", "1", "--addr", "0x1000"]),
        ("move", vec!["move", "1", "--section", ".bss", "--to-node", "0"]),
    ] {
        let output = numasleuth().args(["--root", fixture]).args(&args).output().unwrap();
        assert_eq!(output.status.code(), Some(2));
        let message = stderr(&output);
        assert!(
            message.starts_with(&format!("numasleuth: error: {what} needs the live system")),
            "{message}"
        );
    }
}

#[test]
fn another_users_process_gets_the_permission_explanation() {
    require_root("it runs numasleuth as another user");
    let dir = tempfile::tempdir().unwrap();
    let victim = victim(dir.path());
    let as_nobody = |args: &[&str]| {
        std::process::Command::new("setpriv")
            .args(["--reuid=65534", "--regid=65534", "--clear-groups"])
            .arg(assert_cmd::cargo::cargo_bin("numasleuth"))
            .args(args)
            .output()
    };
    let pid = victim.pid.to_string();
    let address = format!("{:#x}", victim.nil_root);
    let output =
        as_nobody(&["watch", &pid, "--addr", &address, "--duration", "200ms"]).expect("setpriv (util-linux) runs");
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    let message = stderr(&output);
    assert!(
        message.contains(&format!("cannot watch process {pid}: permission denied")),
        "{message}"
    );
    assert!(message.contains("kernel.perf_event_paranoid is"), "{message}");
    assert!(message.contains("`sysctl kernel.perf_event_paranoid=1`"), "{message}");
    // By symbol, reading its maps is refused first, with the same advice.
    let output = as_nobody(&["watch", &pid, "--symbol", "nil_root"]).unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert!(
        stderr(&output).contains("run as root or with CAP_SYS_PTRACE"),
        "{}",
        stderr(&output)
    );
}

/// x86 has 4 debug registers per thread: four watches of one thread fill
/// them and a fifth is refused with ENOSPC, explained.
#[test]
#[cfg_attr(not(target_arch = "x86_64"), ignore = "the 4-register limit is x86's")]
fn a_fifth_concurrent_watch_is_refused_and_explained() {
    let dir = tempfile::tempdir().unwrap();
    let binary = victim_build::build(dir.path(), "victim", &[]);
    let victim = victim_build::start(&binary, &["--workers", "1", "--seconds", "30"]);
    let pid = victim.pid.to_string();
    let bin = assert_cmd::cargo::cargo_bin("numasleuth");
    let mut four: Vec<std::process::Child> = (0..4)
        .map(|_| {
            std::process::Command::new(&bin)
                .args(["watch", &pid, "--symbol", "nil_root", "--duration", "4s"])
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::null())
                .spawn()
                .unwrap()
        })
        .collect();
    std::thread::sleep(std::time::Duration::from_millis(1500));
    let output = numasleuth()
        .args(["watch", &pid, "--symbol", "nil_root", "--duration", "200ms"])
        .output()
        .unwrap();
    let statuses: Vec<_> = four.iter_mut().map(|c| c.wait().unwrap()).collect();
    assert!(
        statuses.iter().all(|s| s.success()),
        "four watches must fit x86's 4 debug registers: {statuses:?}"
    );
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    let message = stderr(&output);
    assert!(
        message.contains("(ENOSPC)") && message.contains("4 debug registers"),
        "{message}"
    );
    assert!(message.contains("5th concurrent watch fails"), "{message}");
}

#[test]
fn unmapped_addresses_wide_lengths_and_typos_are_said() {
    let dir = tempfile::tempdir().unwrap();
    let victim = victim(dir.path());
    let pid = victim.pid.to_string();
    // Nothing is mapped at 0x1: refused, not a watch that counts 0.
    let output = numasleuth().args(["watch", &pid, "--addr", "0x1"]).output().unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert!(
        stderr(&output).starts_with(&format!(
            "numasleuth: error: address 0x1 is not mapped in process {pid}"
        )),
        "{}",
        stderr(&output)
    );
    // log_level is a 4-byte int: --len 8 covers its neighbour, and says so.
    let output = numasleuth()
        .args([
            "watch",
            &pid,
            "--symbol",
            "log_level",
            "--len",
            "8",
            "--duration",
            "200ms",
            "--json",
        ])
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", stderr(&output));
    let warning = "--len 8 is wider than the symbol (4 bytes)";
    assert!(
        stderr(&output).contains(&format!("warning: {warning}")),
        "{}",
        stderr(&output)
    );
    let doc: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert!(
        doc["notes"]
            .as_array()
            .unwrap()
            .iter()
            .any(|n| n.as_str().unwrap().starts_with(warning)),
        "{doc:#}"
    );
    // A typo gets the names it was probably meant to be.
    let output = numasleuth()
        .args(["watch", &pid, "--symbol", "nil_rot"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert!(
        stderr(&output).contains("did you mean `nil_root`"),
        "{}",
        stderr(&output)
    );
}
