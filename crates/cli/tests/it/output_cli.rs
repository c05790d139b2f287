//! `-o, --output FILE` and `--format` on every command with a report: the
//! format follows the extension or `--format`, a format a command lacks is
//! one line and exit 2, files are written whole or not at all, and every
//! format of every report says where it came from (provenance).

use crate::common;

use std::path::{Path, PathBuf};

use common::{exit_2_stderr, numasleuth, stderr};
use serde_json::Value;

fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/fixtures")
        .join(name)
}

/// Runs `args` (with `-o dir/NAME` for each name) and returns stdout.
fn run_with_outputs(root: Option<&Path>, args: &[&str], dir: &Path, names: &[&str]) -> String {
    let mut cmd = numasleuth();
    if let Some(root) = root {
        cmd.arg("--root").arg(root);
    }
    // Before a `--` that starts a command to run, after everything else.
    let split = args.iter().position(|a| *a == "--").unwrap_or(args.len());
    cmd.args(&args[..split]);
    for name in names {
        cmd.arg("-o").arg(dir.join(name));
    }
    cmd.args(&args[split..]);
    let out = cmd.output().unwrap();
    assert!(out.status.success(), "{args:?} {names:?}: {}", stderr(&out));
    for name in names {
        assert!(
            stderr(&out).contains(&format!("numasleuth: wrote {}", dir.join(name).display())),
            "{args:?}: {}",
            stderr(&out)
        );
    }
    String::from_utf8(out.stdout).unwrap()
}

/// Every format a report offers carries its provenance; `live` says which
/// source the JSON must name.
fn assert_provenance(dir: &Path, name: &str, snapshot: Option<&Path>) {
    let text = std::fs::read_to_string(dir.join(name)).unwrap();
    let expected_start = match snapshot {
        Some(root) => format!("reading snapshot {}", root.display()),
        None => "live system".to_string(),
    };
    match Path::new(name).extension().and_then(|e| e.to_str()).unwrap() {
        "json" => {
            // A JSON-lines stream carries it in its first record.
            let first = text.lines().next().unwrap();
            let doc: Value = serde_json::from_str(&text)
                .or_else(|_| serde_json::from_str(first))
                .unwrap_or_else(|e| panic!("{name}: {e}"));
            let p = &doc["provenance"];
            assert!(p["numasleuth_version"].is_string(), "{name}: {p}");
            assert!(p["generated_unix_s"].as_u64().unwrap() > 0, "{name}: {p}");
            let source = if snapshot.is_some() { "snapshot" } else { "live" };
            assert_eq!(p["source"], source, "{name}");
        }
        "txt" => {
            let (first, _) = crate::common::provenance_and_report(&text);
            assert!(first.contains(&expected_start), "{name}: {first}");
            assert!(first.contains("numasleuth 0."), "{name}: {first}");
        }
        "svg" => {
            assert!(text.contains("<desc>"), "{name}");
            assert!(text.matches(&expected_start).count() >= 2, "{name}: desc and footer");
        }
        "html" => {
            let source = match snapshot {
                Some(root) => format!("snapshot {}", root.display()),
                None => "live system".to_string(),
            };
            assert!(text.contains("<td>source</td>") && text.contains(&source), "{name}");
            assert!(text.contains("numasleuth</td><td>0."), "{name}");
        }
        "csv" => assert!(!text.contains("numasleuth 0."), "{name}: CSV is data only"),
        other => panic!("{other}"),
    }
}

#[test]
fn offline_reports_carry_provenance_in_every_format() {
    let dir = tempfile::tempdir().unwrap();
    let nic = fixture("qemu-three-nodes-nic");
    for (args, names) in [
        (vec!["topo"], vec!["topo.txt", "topo.json"]),
        (vec!["doctor"], vec!["doctor.txt", "doctor.json", "doctor.html"]),
        (vec!["irq", "--fix"], vec!["irq.txt", "irq.json"]),
    ] {
        let stdout = run_with_outputs(Some(&nic), &args, dir.path(), &names);
        // stdout keeps the text report, provenance first.
        assert!(stdout.starts_with("reading snapshot"), "{args:?}: {stdout}");
        for name in names {
            assert_provenance(dir.path(), name, Some(&nic));
        }
    }
    // A snapshot holds one instant: memwatch shows it as text or JSON.
    let zone = fixture("zone-reclaim-incident");
    let names = ["memwatch.txt", "memwatch.json"];
    let args = ["memwatch", "--interval", "100ms", "--duration", "200ms"];
    run_with_outputs(Some(&zone), &args, dir.path(), &names);
    for name in names {
        assert_provenance(dir.path(), name, Some(&zone));
    }
}

#[test]
fn a_json_lines_stream_carries_provenance_in_its_first_record() {
    let dir = tempfile::tempdir().unwrap();
    let names = ["memwatch.txt", "memwatch.json", "memwatch.svg"];
    let args = ["memwatch", "--interval", "100ms", "--duration", "200ms"];
    run_with_outputs(None, &args, dir.path(), &names);
    for name in names {
        assert_provenance(dir.path(), name, None);
    }
    let lines: Vec<Value> = std::fs::read_to_string(dir.path().join("memwatch.json"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 3, "two samples and the summary");
    assert!(lines[1].get("provenance").is_none() && lines[2]["type"] == "summary");
}

#[test]
fn live_reports_carry_provenance_in_every_format() {
    let dir = tempfile::tempdir().unwrap();
    let mut sleeper = std::process::Command::new("sleep").arg("30").spawn().unwrap();
    let pid = sleeper.id().to_string();
    let me = std::env::current_exe().unwrap();
    let cases: Vec<(Vec<&str>, Vec<&str>)> = vec![
        (vec!["inspect", "-p", &pid], vec!["inspect.txt", "inspect.json"]),
        (vec!["lines", me.to_str().unwrap()], vec!["lines.txt", "lines.json"]),
        (
            vec!["mem", "latency", "--size", "1M", "--samples", "2", "--sample-ms", "1"],
            vec!["mem.txt", "mem.json", "mem.csv"],
        ),
        (
            vec!["c2c", "--samples", "2", "--transfers", "50"],
            vec!["c2c.txt", "c2c.json", "c2c.csv"],
        ),
        (
            vec![
                "lab",
                "false-sharing",
                "--threads",
                "1",
                "--samples",
                "1",
                "--sample-ms",
                "2ms",
            ],
            vec!["lab.txt", "lab.json", "lab.svg"],
        ),
        (
            vec!["runs", "-n", "4", "--", "true"],
            vec!["runs.txt", "runs.json", "runs.svg"],
        ),
        (
            vec!["probe-latency", "--rate", "50/s", "--duration", "200ms"],
            vec!["probe.txt", "probe.json", "probe.svg"],
        ),
    ];
    // The sleeper's first mapping: watch refuses an address nothing maps.
    let maps = std::fs::read_to_string(format!("/proc/{pid}/maps")).unwrap();
    let mapped = format!("0x{}", maps.split('-').next().unwrap());
    let pmu = dir.path().join("pmu.json");
    let pmu = pmu.to_str().unwrap();
    common::require_root("pmu, hotlines, watch and move attach to another process with perf or ptrace");
    // Run in order: `pmu diff` reads the pmu.json written just before it.
    let process_cases: Vec<(Vec<&str>, Vec<&str>)> = vec![
        (
            vec!["pmu", "--events", "task-clock", "--", "true"],
            vec!["pmu.txt", "pmu.json"],
        ),
        (vec!["pmu", "diff", pmu, pmu], vec!["diff.txt", "diff.json"]),
        (
            vec!["migrations", &pid, "--duration", "200ms"],
            vec!["mig.txt", "mig.json"],
        ),
        (
            vec!["hotlines", &pid, "--duration", "200ms"],
            vec!["hot.txt", "hot.json"],
        ),
        (
            vec!["move", &pid, "--to-node", "0", "--section", ".bss"],
            vec!["move.txt", "move.json"],
        ),
        (
            vec!["watch", &pid, "--addr", &mapped, "--duration", "100ms"],
            vec!["watch.txt", "watch.json"],
        ),
    ];
    for (args, names) in cases.into_iter().chain(process_cases) {
        let stdout = run_with_outputs(None, &args, dir.path(), &names);
        assert!(
            crate::common::provenance_and_report(&stdout).0.contains("live system"),
            "{args:?}: {stdout}"
        );
        for name in names {
            assert_provenance(dir.path(), name, None);
        }
    }
    let _ = sleeper.kill();
    let _ = sleeper.wait();
}

#[test]
fn json_on_stdout_carries_provenance_for_every_alias() {
    let nic = fixture("qemu-three-nodes-nic");
    for args in [
        vec!["topo", "--json"],
        vec!["topo", "--format", "json"],
        vec!["irq", "--json"],
        vec!["doctor", "--json"],
    ] {
        let out = numasleuth().arg("--root").arg(&nic).args(&args).output().unwrap();
        assert!(out.status.success(), "{args:?}: {}", stderr(&out));
        let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(doc["provenance"]["source"], "snapshot", "{args:?}");
        assert!(doc["schema"].as_str().unwrap().starts_with("numasleuth."), "{args:?}");
    }
}

#[test]
fn format_forces_the_file_format_whatever_the_extension() {
    let dir = tempfile::tempdir().unwrap();
    let nic = fixture("qemu-three-nodes-nic");
    let stdout = run_with_outputs(Some(&nic), &["topo", "--format", "json"], dir.path(), &["report"]);
    // With -o, stdout keeps the text.
    assert!(stdout.starts_with("reading snapshot"), "{stdout}");
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(dir.path().join("report")).unwrap()).unwrap();
    assert_eq!(doc["schema"], "numasleuth.topo/1");
    // Upper-case extensions name the same format.
    run_with_outputs(Some(&nic), &["topo"], dir.path(), &["T.JSON"]);
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(dir.path().join("T.JSON")).unwrap()).unwrap();
    assert_eq!(doc["schema"], "numasleuth.topo/1");
}

fn one_line_exit_2(args: &[&str]) -> String {
    let err = exit_2_stderr(args);
    assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
    err
}

#[test]
fn unknown_extensions_and_missing_formats_are_one_line_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    let at = |name: &str| dir.path().join(name).to_str().unwrap().to_string();
    let pdf = at("x.pdf");
    let err = one_line_exit_2(&["topo", "-o", &pdf]);
    assert!(err.contains("extension .pdf") && err.contains(".txt .json"), "{err}");
    let bare = at("report");
    let err = one_line_exit_2(&["topo", "-o", &bare]);
    assert!(err.contains("without an extension"), "{err}");
    let err = one_line_exit_2(&["topo", "--format", "csv"]);
    assert_eq!(
        err,
        "numasleuth: error: --format csv: no csv output for this command; it writes text (.txt), json (.json)\n"
    );
    let svg = at("t.svg");
    let err = one_line_exit_2(&["inspect", "-p", "1", "-o", &svg]);
    assert!(err.contains("no svg output") && err.contains("json (.json)"), "{err}");
    let err = one_line_exit_2(&["mem", "latency", "-o", &at("m.html")]);
    assert!(err.contains("no html output") && err.contains("csv (.csv)"), "{err}");
    let err = one_line_exit_2(&["topo", "--json", "--format", "text"]);
    assert!(err.contains("give one"), "{err}");
    let err = one_line_exit_2(&["topo", "--format", "pdf"]);
    assert!(err.contains("pdf"), "{err}");
    let json = at("a.json");
    let err = one_line_exit_2(&["topo", "-o", &json, "-o", &json]);
    assert!(err.contains("given twice"), "{err}");
    let mut many = vec!["topo".to_string()];
    for i in 0..9 {
        many.extend(["-o".to_string(), at(&format!("f{i}.json"))]);
    }
    let many: Vec<&str> = many.iter().map(String::as_str).collect();
    assert!(one_line_exit_2(&many).contains("at most 8"));
    let missing = at("no/such/dir/t.json");
    assert!(one_line_exit_2(&["topo", "-o", &missing]).contains("does not exist"));
    // Nothing was written by any refused run.
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
}

#[test]
fn a_format_error_comes_before_a_long_measurement() {
    // c2c would measure for seconds; the bad -o is refused first.
    let out = numasleuth()
        .args(["c2c", "--samples", "1000", "-o", "x.html"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("no html output"), "{}", stderr(&out));
}

#[test]
fn a_directory_that_cannot_be_written_leaves_nothing_behind() {
    common::require_root("runs numasleuth as nobody (setpriv) against a directory only root may write");
    let dir = tempfile::tempdir().unwrap();
    let nic = fixture("qemu-three-nodes-nic");
    let locked = dir.path().join("locked");
    std::fs::create_dir(&locked).unwrap();
    std::fs::write(locked.join("t.json"), "old").unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o555)).unwrap();
    // The report that could not be written is kept here instead.
    let copies = dir.path().join("copies");
    std::fs::create_dir(&copies).unwrap();
    std::fs::set_permissions(&copies, std::fs::Permissions::from_mode(0o777)).unwrap();
    let out = std::process::Command::new("setpriv")
        .env("TMPDIR", &copies)
        .args(["--reuid=65534", "--regid=65534", "--clear-groups"])
        .arg(assert_cmd::cargo::cargo_bin("numasleuth"))
        .arg("--root")
        .arg(&nic)
        .args(["topo", "-o"])
        .arg(locked.join("t.json"))
        .output()
        .expect("setpriv runs numasleuth as nobody");
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.contains("cannot write") && err.contains("Permission denied"),
        "{err}"
    );
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("saved as") && String::from_utf8_lossy(&out.stdout).contains("reading snapshot"));
    assert_eq!(std::fs::read_dir(&copies).unwrap().count(), 1, "{err}");
    let names: Vec<String> = std::fs::read_dir(&locked)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names, vec!["t.json".to_string()], "no temporary file left");
    assert_eq!(std::fs::read_to_string(locked.join("t.json")).unwrap(), "old");
    // Where it can write, an existing file is replaced whole.
    let file = dir.path().join("t.json");
    std::fs::write(&file, "old").unwrap();
    run_with_outputs(Some(&nic), &["topo"], dir.path(), &["t.json"]);
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    assert_eq!(doc["schema"], "numasleuth.topo/1");
}
