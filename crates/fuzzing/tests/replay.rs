//! Replays saved fuzz inputs through the harnesses, in the normal test
//! suite: every crasher under `fuzz/regressions/TARGET/` (each a bug that
//! was fixed and must stay fixed), every committed seed under
//! `fuzz/seeds/TARGET/`, and the real kernel files of the fixture trees,
//! so the harnesses' own checks are known to hold on real captures.

use std::fs;
use std::path::{Path, PathBuf};

use numasleuth_fuzzing::{harness, TARGETS};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// `(target, file)` for every file under `fuzz/KIND/TARGET/`.
fn saved(kind: &str) -> Vec<(String, PathBuf)> {
    let dir = repo().join("fuzz").join(kind);
    let mut out = Vec::new();
    for target in fs::read_dir(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
        let target = target.unwrap().path();
        if !target.is_dir() {
            continue; // README.md
        }
        let name = target.file_name().unwrap().to_string_lossy().into_owned();
        assert!(
            harness(&name).is_some(),
            "{}: no fuzz target is called `{name}`",
            target.display()
        );
        for file in fs::read_dir(&target).unwrap() {
            out.push((name.clone(), file.unwrap().path()));
        }
    }
    out.sort();
    out
}

fn replay(inputs: &[(String, PathBuf)]) {
    for (target, path) in inputs {
        let data = fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        eprintln!("{target} < {}", path.display());
        harness(target).unwrap()(&data);
    }
}

#[test]
fn every_regression_stays_fixed() {
    let inputs = saved("regressions");
    replay(&inputs);
}

#[test]
fn every_committed_seed_passes() {
    let inputs = saved("seeds");
    for (target, _) in TARGETS {
        assert!(inputs.iter().any(|(t, _)| t == target), "fuzz/seeds/{target}/ is empty");
    }
    replay(&inputs);
}

/// Every file under the fixture trees whose path ends in `suffix`.
fn fixtures(suffix: &str) -> Vec<PathBuf> {
    fn walk(dir: &Path, suffix: &str, out: &mut Vec<PathBuf>) {
        for entry in fs::read_dir(dir).unwrap() {
            let entry = entry.unwrap();
            let path = entry.path();
            let kind = entry.file_type().unwrap();
            if kind.is_dir() {
                walk(&path, suffix, out);
            } else if kind.is_file() && path.to_string_lossy().ends_with(suffix) {
                out.push(path);
            }
        }
    }
    let mut out = Vec::new();
    walk(&repo().join("tests/fixtures"), suffix, &mut out);
    out.sort();
    out
}

/// A fixture file through a harness, behind a dispatching target's
/// selector byte when there is one.
fn fixture_inputs(target: &str, selector: Option<u8>, suffix: &str) -> usize {
    let files = fixtures(suffix);
    for path in &files {
        let mut data: Vec<u8> = selector.into_iter().collect();
        data.extend(fs::read(path).unwrap());
        eprintln!("{target} < {}", path.display());
        harness(target).unwrap()(&data);
    }
    files.len()
}

#[test]
fn fixture_files_pass_their_harnesses() {
    let cases: [(&str, Option<u8>, &str); 14] = [
        ("zoneinfo", None, "/proc/zoneinfo"),
        ("interrupts", None, "/proc/interrupts"),
        ("cpulist", None, "/cpulist"),
        ("cpulist", None, "/shared_cpu_list"),
        ("cpulist", None, "/online"),
        ("procfs_parsers", Some(b'c'), "/proc/cpuinfo"),
        ("procfs_parsers", Some(b'm'), "/meminfo"),
        ("procfs_parsers", Some(b's'), "/status"),
        ("procfs_parsers", Some(b'w'), "/proc/swaps"),
        ("procfs_parsers", Some(b'e'), "/transparent_hugepage/enabled"),
        ("sysfs_parsers", Some(b'd'), "/distance"),
        ("sysfs_parsers", Some(b'n'), "/proc/vmstat"),
        ("sysfs_parsers", Some(b'z'), "/size"),
        ("sysfs_parsers", Some(b'i'), "/physical_package_id"),
    ];
    for (target, selector, suffix) in cases {
        let count = fixture_inputs(target, selector, suffix);
        assert!(count > 0, "no fixture file ends in {suffix}");
    }
}

/// The journal seeds must pass the structural checks, or the fuzzer never
/// reaches the seal-save-load check behind them; the forged one must not.
#[test]
fn journal_seeds_reach_past_the_structural_checks() {
    for name in ["irq-affinity.json", "pages.json"] {
        let path = repo().join("fuzz/seeds/journal").join(name);
        let text = std::fs::read_to_string(&path).unwrap();
        numasleuth_change::Journal::from_json(&text).unwrap_or_else(|e| panic!("{name}: {e}"));
    }
    let forged = std::fs::read_to_string(repo().join("fuzz/seeds/journal/forged-path.json")).unwrap();
    let err = numasleuth_change::Journal::from_json(&forged).unwrap_err();
    assert!(
        matches!(err, numasleuth_change::JournalError::NotWritable { .. }),
        "{err}"
    );
}
