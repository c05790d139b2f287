//! Golden tests: what a person sees from every command that reads a
//! snapshot, on each fixture tree under tests/fixtures (real captures from a
//! KVM guest and from QEMU multi-node guests, plus the zone-reclaim
//! incident), at 60, 80 and 120 columns, each checked to fit its width
//! (stdout and stderr). A change to any of these outputs
//! shows up as a reviewable diff; `INSTA_UPDATE=always cargo test -p
//! numasleuth --test it golden_cli::` rewrites them after a deliberate change.
//!
//! Volatile values (this run's time, the version and git commit, sampling
//! costs, elapsed seconds) are redacted; the text's provenance line, whose
//! wrapping moves with the version's length, is checked apart and
//! redacted; everything read from the snapshot stays, so a renderer or
//! analysis change cannot hide.

use std::path::{Path, PathBuf};

use assert_cmd::Command;

use crate::common::{assert_fits, assert_provenance, PROVENANCE_FILTER};
use crate::debug_output;

const FIXTURES: &[&str] = &[
    "kvm-2cpu-1node",
    "qemu-four-nodes-asymmetric",
    "qemu-offline-cpu",
    "qemu-three-nodes-nic",
    "qemu-two-nodes",
    "zone-reclaim-incident",
];

const TERMINAL_WIDTHS: &[u16] = &[60, 80, 120];

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .expect("workspace root")
}

/// Runs numasleuth from the workspace root with a relative `--root`, so the
/// snapshot path printed in provenance lines is the same on every checkout.
fn run(fixture: &str, args: &[&str], columns: Option<u16>) -> String {
    let root = format!("tests/fixtures/{fixture}");
    let mut command = Command::cargo_bin("numasleuth").expect("binary");
    command
        .current_dir(workspace_root())
        .env("NO_COLOR", "1")
        .env_remove("COLUMNS")
        .arg("--root")
        .arg(&root)
        .args(args);
    if let Some(columns) = columns {
        command.env("COLUMNS", columns.to_string());
    }
    let output = command.output().expect("run numasleuth");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    let status = output.status.code().map_or("signal".to_string(), |c| c.to_string());
    format!("exit {status}\n--- stdout\n{stdout}--- stderr\n{stderr}")
}

/// Values that change from run to run while the snapshot stays the same.
fn volatile_filters() -> Vec<(&'static str, &'static str)> {
    vec![
        PROVENANCE_FILTER,
        (
            r"numasleuth \d+\.\d+\.\d+( \(git [0-9a-f]+(-dirty)?\))?, \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC",
            "numasleuth [VERSION], [NOW]",
        ),
        // JSON, pretty (`"key": value`) or one document per line (`"key":value`).
        (r#"("numasleuth_version": ?)"[^"]*""#, r#"${1}"[VERSION]""#),
        (r#"("generated_unix_s": ?)\d+"#, r#"${1}"[NOW]""#),
        (r#"("generated_utc": ?)"[^"]*""#, r#"${1}"[NOW]""#),
        (r"\d+\.\d+\.\d+ \(git [0-9a-f]+(-dirty)?\)", "[VERSION]"),
        (r"(?m)^<td>\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC</td>$", "<td>[NOW]</td>"),
        (r"generated \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC", "generated [NOW]"),
        (r"sampling cost: .*(\n {2,}.*)*", "sampling cost: [REDACTED]"),
        // memwatch's elapsed time of a sample: a busy machine makes 0.1 s 0.2 s.
        (r"(?m)^t=\s*\d+\.\ds ", "t=[T] "),
        (r#""t_s":[0-9.e-]+"#, r#""t_s":"[T]""#),
        (r#""sampling_cost_us":\{[^}]*\}"#, r#""sampling_cost_us":"[REDACTED]""#),
        (
            r#""cost_share_of_interval_percent":[0-9.e-]+"#,
            r#""cost_share_of_interval_percent":"[REDACTED]""#,
        ),
    ]
}

fn check(name: &str, fixture: &str, suffix: &str, output: &str, scan_for_debug: bool) {
    if scan_for_debug {
        if let Some(found) = debug_output::find(output) {
            panic!("{name} on {fixture}: Rust debug output reaches the user: {found}");
        }
    }
    let mut settings = insta::Settings::clone_current();
    settings.set_snapshot_suffix(format!("{fixture}@{suffix}"));
    settings.set_prepend_module_to_snapshot(false);
    settings.set_snapshot_path("../snapshots");
    settings.set_omit_expression(true);
    for (pattern, replacement) in volatile_filters() {
        settings.add_filter(pattern, replacement);
    }
    settings.bind(|| insta::assert_snapshot!(name, output));
}

fn golden_text(name: &str, args: &[&str]) {
    for fixture in FIXTURES {
        for &columns in TERMINAL_WIDTHS {
            let output = run(fixture, args, Some(columns));
            let what = format!("{name} on {fixture}");
            assert_fits(&what, &output, usize::from(columns));
            let stdout = output.split_once("--- stdout\n").map_or("", |(_, rest)| rest);
            assert_provenance(&what, stdout, &format!("reading snapshot tests/fixtures/{fixture} of "));
            check(name, fixture, &columns.to_string(), &output, true);
        }
    }
}

fn golden_json(name: &str, args: &[&str]) {
    for fixture in FIXTURES {
        let output = run(fixture, args, None);
        check(name, fixture, "json", &output, false);
    }
}

#[test]
fn topo_text_at_60_80_and_120_columns() {
    golden_text("topo", &["topo"]);
}

#[test]
fn topo_json() {
    golden_json("topo_json", &["topo", "--json"]);
}

#[test]
fn doctor_text_at_60_80_and_120_columns() {
    golden_text("doctor", &["doctor"]);
}

#[test]
fn doctor_json() {
    golden_json("doctor_json", &["doctor", "--json"]);
}

#[test]
fn doctor_html() {
    for fixture in FIXTURES {
        let dir = tempfile::tempdir().expect("tempdir");
        let html_path = dir.path().join("report.html");
        let html_arg = html_path.to_str().expect("utf-8 temp path");
        let run_output = run(fixture, &["doctor", "--html", html_arg], Some(200));
        assert!(
            run_output.starts_with("exit 0"),
            "doctor --html on {fixture}: {run_output}"
        );
        let html = std::fs::read_to_string(&html_path).expect("the HTML report");
        // One element per line, so a change reads as a small diff.
        let html = html.replace("><", ">\n<");
        check("doctor_html", fixture, "html", &html, true);
    }
}

#[test]
fn irq_text_at_60_80_and_120_columns() {
    golden_text("irq", &["irq"]);
}

#[test]
fn irq_json() {
    golden_json("irq_json", &["irq", "--json"]);
}

#[test]
fn memwatch_text_at_60_80_and_120_columns() {
    golden_text("memwatch", &["memwatch", "--interval", "100ms", "--duration", "100ms"]);
}

#[test]
fn meminfo_text_at_60_80_and_120_columns() {
    golden_text("meminfo", &["meminfo"]);
}

#[test]
fn meminfo_json() {
    golden_json("meminfo_json", &["meminfo", "--json"]);
}

#[test]
fn memwatch_json() {
    golden_json(
        "memwatch_json",
        &["memwatch", "--interval", "100ms", "--duration", "100ms", "--json"],
    );
}

/// The stored golden files themselves, so a snapshot accepted in a hurry
/// cannot carry debug output either.
#[test]
fn no_golden_file_holds_rust_debug_output() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/snapshots");
    let scanned = debug_output::scan_snapshots(&dir);
    assert!(
        scanned >= FIXTURES.len() * 4,
        "only {scanned} golden files found in {}",
        dir.display()
    );
}
