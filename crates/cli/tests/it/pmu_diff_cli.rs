//! `pmu diff` on real runs of this machine: the ranking of a program
//! touching 10 MiB against one touching 400 MiB, and the files it refuses
//! (another schema, a FIFO, a huge file, malformed JSON) without blocking.

use crate::common;

use std::path::Path;
use std::time::Duration;

use common::{numasleuth, output, stderr};
use serde_json::Value;

fn run_touching(dir: &Path, name: &str, mib: u32) -> std::path::PathBuf {
    let script = format!("b = bytearray({mib} << 20)\nfor i in range(0, len(b), 4096): b[i] = 1");
    let out = output(&["pmu", "--json", "--", "python3", "-c", &script]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let path = dir.join(name);
    std::fs::write(&path, &out.stdout).unwrap();
    path
}

#[test]
fn diff_ranks_page_faults_first_for_10_mib_against_400_mib() {
    let dir = tempfile::tempdir().unwrap();
    let good = run_touching(dir.path(), "good.json", 10);
    let bad = run_touching(dir.path(), "bad.json", 400);
    let out = numasleuth()
        .arg("pmu")
        .arg("diff")
        .arg(&good)
        .arg(&bad)
        .arg("--json")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["schema"], "numasleuth.pmu_diff/1");
    assert_eq!(doc["per"], "second");
    // Per second, the ranking depends on how long each run took on a busy
    // machine; the ranking is asserted on totals below, never on timing.
    assert!(!doc["rows"].as_array().unwrap().is_empty(), "{doc:#}");
    let out = numasleuth()
        .arg("pmu")
        .arg("diff")
        .arg(&good)
        .arg(&bad)
        .args([
            "--json",
            "--per",
            "op",
            "--ops-good",
            "1",
            "--ops-bad",
            "1",
            "--min-count",
            "1000",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["per"], "op");
    let rows = doc["rows"].as_array().unwrap();
    // Ranked by how far each event moved, the largest change first.
    let moved: Vec<f64> = rows.iter().map(|r| r["log_ratio"].as_f64().unwrap().abs()).collect();
    assert!(moved.windows(2).all(|w| w[0] >= w[1]), "{doc:#}");
    // page-faults is minor-faults plus the (few) major ones, so the two
    // move together and lead the events that count something: 102,400
    // pages against 2,560. The clocks are left out of this: how much CPU
    // time those pages cost depends on the host (a clean CI clone, with a
    // build beside the tests, once saw 46-fold where a quiet machine sees
    // 3- to 16-fold), and a test never judges timing. Events under 1,000 in
    // both runs (context switches, migrations, which a loaded machine
    // inflates) are left out of the ranking.
    let counts: Vec<&Value> = rows.iter().filter(|r| !is_clock(r)).collect();
    let mut top: Vec<&str> = counts[..2].iter().map(|r| r["name"].as_str().unwrap()).collect();
    top.sort();
    assert_eq!(top, ["minor-faults", "page-faults"], "{doc:#}");
    for row in &counts[..2] {
        assert!(row["ratio"].as_f64().unwrap() > 2.0, "{row:#}");
        assert!(row["b"].as_f64().unwrap() > row["a"].as_f64().unwrap());
        for key in ["name", "a", "b", "ratio", "log_ratio"] {
            assert!(row.get(key).is_some(), "{key} missing in {row:#}");
        }
    }
    // The same files per op (one run each) compare totals: 400 MiB is
    // 102,400 pages against 2,560.
    let out = numasleuth()
        .arg("pmu")
        .arg("diff")
        .arg(&good)
        .arg(&bad)
        .args(["--per", "op", "--ops-good", "1", "--ops-bad", "1"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = String::from_utf8(out.stdout).unwrap();
    // After the provenance, the heading and the table's header: the first
    // ranked line that is not a clock.
    let first = text
        .lines()
        .filter(|l| {
            l.split_whitespace()
                .next()
                .is_some_and(|rank| rank.parse::<usize>().is_ok())
        })
        .find(|l| !l.contains("task-clock") && !l.contains("cpu-clock"))
        .unwrap_or_default();
    assert!(
        first.contains("page-faults") || first.contains("minor-faults"),
        "{text}"
    );
}

/// The software events that measure time (ns on the CPU), not a count.
fn is_clock(row: &Value) -> bool {
    matches!(row["name"].as_str(), Some("task-clock" | "cpu-clock"))
}

fn diff_error(good: &Path, bad: &Path, extra: &[&str]) -> String {
    let out = numasleuth()
        .arg("pmu")
        .arg("diff")
        .arg(good)
        .arg(bad)
        .args(extra)
        .timeout(Duration::from_secs(20))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let err = stderr(&out);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.starts_with("numasleuth: error: "), "{err}");
    err
}

fn write(dir: &Path, name: &str, text: &str) -> std::path::PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

const MINIMAL: &str = r#"{"schema": "numasleuth.pmu/1", "duration_s": 1.0,
    "events": [{"name": "task-clock", "pmu": "software", "value": 5, "scaled_value": 5.0}]}"#;

#[test]
fn diff_refuses_files_that_are_not_pmu_runs() {
    let dir = tempfile::tempdir().unwrap();
    let good = write(dir.path(), "good.json", MINIMAL);
    let watch = write(
        dir.path(),
        "watch.json",
        r#"{"schema": "numasleuth.watch/1", "pid": 1}"#,
    );
    let err = diff_error(&good, &watch, &[]);
    assert!(
        err.contains("BAD ") && err.contains("is a numasleuth.watch/1 file, not numasleuth.pmu/1"),
        "{err}"
    );
    let malformed = write(
        dir.path(),
        "cut.json",
        "{\"schema\": \"numasleuth.pmu/1\", \"events\": [",
    );
    assert!(diff_error(&malformed, &good, &[]).contains("GOOD "), "GOOD is named");
    assert!(diff_error(&malformed, &good, &[]).contains("is not valid JSON"));
    let no_duration = write(
        dir.path(),
        "nod.json",
        r#"{"schema": "numasleuth.pmu/1", "events": []}"#,
    );
    assert!(diff_error(&good, &no_duration, &[]).contains("missing field `duration_s`"));
    let binary = dir.path().join("bin.json");
    std::fs::write(&binary, [0xffu8, 0xfe, 0x00]).unwrap();
    assert!(diff_error(&good, &binary, &[]).contains("is not UTF-8 text"));
    assert!(diff_error(&good, &dir.path().join("missing.json"), &[]).contains("No such file"));
    assert!(diff_error(&good, dir.path(), &[]).contains("is a directory"));
}

#[test]
fn diff_refuses_a_fifo_without_blocking_and_a_huge_file_without_reading_it() {
    let dir = tempfile::tempdir().unwrap();
    let good = write(dir.path(), "good.json", MINIMAL);
    let fifo = dir.path().join("fifo.json");
    let c_path = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    // SAFETY: c_path is a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c_path.as_ptr(), 0o600) }, 0);
    assert!(diff_error(&good, &fifo, &[]).contains("is a FIFO, not a regular file"));
    let huge = dir.path().join("huge.json");
    // Sparse: 17 MiB that takes no disk.
    std::fs::File::create(&huge).unwrap().set_len(17 << 20).unwrap();
    let err = diff_error(&huge, &good, &[]);
    assert!(
        err.contains("larger than 16 MiB; refusing to read it (no numasleuth.pmu/1 file is that large)"),
        "{err}"
    );
}

#[test]
fn diff_needs_what_its_normalisation_divides_by() {
    let dir = tempfile::tempdir().unwrap();
    let good = write(dir.path(), "good.json", MINIMAL);
    let err = diff_error(&good, &good, &["--per", "instructions"]);
    assert!(err.contains("`instructions` was not counted in A"), "{err}");
    assert!(diff_error(&good, &good, &["--per", "op"]).contains("--per op needs --ops-good N and --ops-bad N"));
    assert!(diff_error(&good, &good, &["--ops-good", "5"]).contains("apply only with --per op"));
    assert!(diff_error(&good, &good, &["--per", "op", "--ops-good", "0", "--ops-bad", "1"]).contains("from 1 to"));
    let zero = write(dir.path(), "zero.json", &MINIMAL.replace("1.0", "0"));
    assert!(diff_error(&good, &zero, &[]).contains("B: duration_s is 0"));
}

/// A subnormal duration (or any under a microsecond) is refused in one line,
/// never ranked on infinity (text) or null (JSON).
#[test]
fn diff_refuses_a_duration_no_run_has() {
    let dir = tempfile::tempdir().unwrap();
    let good = write(dir.path(), "good.json", MINIMAL);
    for tiny in ["5e-324", "1e-308", "1e-9"] {
        let bad = write(dir.path(), "tiny.json", &MINIMAL.replace("1.0", tiny));
        for extra in [&[][..], &["--json"][..]] {
            let err = diff_error(&good, &bad, extra);
            assert!(err.contains("B: duration_s is") && err.contains("at least"), "{err}");
        }
    }
}
