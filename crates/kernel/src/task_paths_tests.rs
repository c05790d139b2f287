//! [`super`] is the only place the `task` and `stat` paths of a process
//! are built, `procfs/maps_read.rs` the only place `maps` is, and
//! `procfs/numa_maps_read.rs` the only place `numa_maps` is: this scans the
//! workspace's sources and fails, naming file and line, where another one
//! lists `/proc/PID/task`, builds a path to a process's or thread's `stat`
//! (issue 22 found seven copies), to its `maps` (five readers, each with its
//! own caps and its own idea of a bad line) or to its `numa_maps` (two).

use std::fs;
use std::path::{Path, PathBuf};

fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        let name = entry.file_name().to_string_lossy().into_owned();
        if path.is_dir() {
            if name != "tests" && name != "target" {
                sources(&path, out);
            }
        } else if name.ends_with(".rs") && !name.ends_with("_tests.rs") && name != "tests.rs" {
            out.push(path);
        }
    }
}

/// The string literals of a line of code (comments dropped), each with
/// the code just before it.
fn literals(line: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut chars = line.char_indices();
    while let Some((at, c)) = chars.next() {
        match c {
            '/' if line[at..].starts_with("//") => break,
            '"' => {
                let mut literal = String::new();
                while let Some((_, d)) = chars.next() {
                    match d {
                        '\\' => literal.extend(chars.next().map(|(_, e)| e)),
                        '"' => break,
                        _ => literal.push(d),
                    }
                }
                out.push((line[..at].to_string(), literal));
            }
            _ => {}
        }
    }
    out
}

/// Whether a literal builds a path into a task directory or to a `stat`
/// of a process or thread. Sentences (with spaces) and evidence names
/// with a glob (`/proc/PID/task/*/stat`) only name such files.
fn builds_task_path(before: &str, literal: &str) -> bool {
    if before.trim_end().ends_with("join(") && (literal == "task" || literal == "stat") {
        return true;
    }
    if literal.contains(char::is_whitespace) || literal.contains('*') || !literal.contains('/') {
        return false;
    }
    let parts: Vec<&str> = literal.split('/').collect();
    let per_task = |p: &str| p.starts_with('{') || p == "self" || p.parse::<u32>().is_ok();
    parts.contains(&"task")
        || (parts.len() >= 2 && parts[parts.len() - 1] == "stat" && per_task(parts[parts.len() - 2]))
}

/// Whether a literal builds a path to a process's `file` (`maps` and
/// `numa_maps` are different files, as are `smaps` and `map_files`). As
/// above, sentences and globs only name it.
fn builds_process_file_path(before: &str, literal: &str, file: &str) -> bool {
    if before.trim_end().ends_with("join(") && literal == file {
        return true;
    }
    if literal.contains(char::is_whitespace) || literal.contains('*') || !literal.contains('/') {
        return false;
    }
    let parts: Vec<&str> = literal.split('/').collect();
    let per_process = |p: &str| p.starts_with('{') || p == "self" || p.parse::<u32>().is_ok();
    parts.len() >= 2 && parts[parts.len() - 1] == file && per_process(parts[parts.len() - 2])
}

fn builds_maps_path(before: &str, literal: &str) -> bool {
    builds_process_file_path(before, literal, "maps")
}

fn builds_numa_maps_path(before: &str, literal: &str) -> bool {
    builds_process_file_path(before, literal, "numa_maps")
}

/// A test of whether a literal (with the code before it) builds a path.
type Builds = fn(&str, &str) -> bool;

/// `builds` finds a path in every line of `hits` and in none of `misses`.
fn assert_pattern(builds: Builds, hits: &[&str], misses: &[&str]) {
    for line in hits {
        assert!(literals(line).iter().any(|(b, l)| builds(b, l)), "missed {line}");
    }
    for line in misses {
        assert!(!literals(line).iter().any(|(b, l)| builds(b, l)), "flagged {line}");
    }
}

/// No source but `own` builds a path `builds` finds; `hint` says which
/// reader to use instead.
fn assert_built_only_in(own: &str, builds: Builds, hint: &str) {
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let found = paths_elsewhere(&workspace, own, builds);
    assert!(found.is_empty(), "{hint}, not by hand:\n{}", found.join("\n"));
}

/// Where `builds` finds a path built outside `own`, as `file:line`.
/// Test code is left out (it may look at a process from outside), and so
/// are the crates that make trees or guest commands rather than read, and
/// the pure crates, which name these files in evidence but do no I/O
/// (`crates/analyze/tests/pure_crates.rs`).
fn paths_elsewhere(workspace: &Path, own: &str, builds: fn(&str, &str) -> bool) -> Vec<String> {
    let mut files = Vec::new();
    sources(&workspace.join("crates"), &mut files);
    let own = workspace.join(own);
    let makers = ["fuzzing", "testbed", "analyze", "report"].map(|c| workspace.join("crates").join(c));
    let mut found = Vec::new();
    for file in files {
        if file == own || makers.iter().any(|m| file.starts_with(m)) {
            continue;
        }
        let text = fs::read_to_string(&file).unwrap();
        for (n, line) in text.lines().enumerate() {
            if line.trim_start().starts_with("#[cfg(test)]") {
                break;
            }
            if literals(line).iter().any(|(b, l)| builds(b, l)) {
                let shown = file.strip_prefix(workspace).unwrap_or(&file).display();
                found.push(format!("{shown}:{}: {}", n + 1, line.trim()));
            }
        }
    }
    found
}

#[test]
fn the_pattern_finds_each_way_a_task_path_was_built() {
    assert_pattern(
        builds_task_path,
        &[
            r#"let entries = std::fs::read_dir(format!("/proc/{pid}/task")).ok()?;"#,
            r#"root.read(&format!("proc/{pid}/task/{tid}/stat"))"#,
            r#"std::fs::read_to_string(format!("/proc/{pid}/stat"))"#,
            r#"self.root.exists(&format!("proc/{pid}/task/{tid}"))"#,
            r#"let stat = fs::read(entry.path().join("stat"));"#,
            r#"fs::read("/proc/self/stat")"#,
        ],
        &[
            r#"stat::read(root, "proc/stat")"#,
            r#"format!("/proc/{}/task/*/stat", model.pid)"#,
            r#"say!("sampling /proc/PID/task/*/stat instead") // "proc/{pid}/task""#,
            r#"[who, "task", _] => owner(who, opener)?,"#,
            r#"format!("{ctx}/0/schemes/0/action"), "stat".into()"#,
        ],
    );
}

#[test]
fn task_and_stat_paths_are_built_here_only() {
    assert_built_only_in(
        "crates/kernel/src/task.rs",
        builds_task_path,
        "read threads and their stat through numasleuth_kernel::task",
    );
}

/// Ways a path to a process's `FILE` was built, for `maps` and `numa_maps`.
const PROCESS_FILE_PATHS: [&str; 5] = [
    r#"LineStream::open(root, &format!("proc/{pid}/FILE"))"#,
    r#"let path = format!("proc/{}/FILE", pid);"#,
    r#"std::fs::read_to_string("/proc/self/FILE")"#,
    r#"fs::read(format!("/proc/{pid}/task/{tid}/FILE"))"#,
    r#"let text = fs::read(dir.join("FILE"));"#,
];

/// Lines that only name `FILE`, or build a path to another file.
const PROCESS_FILE_NAMES: [&str; 6] = [
    r#"format!("/proc/{pid}/map_files/{:x}-{:x}", start, end)"#,
    r#"bail!("no mapping in /proc/{pid}/FILE holds it")"#,
    r#"LockFile::Smaps => "/proc/PID/smaps","#,
    r#"LockFile::NumaMaps => "/proc/PID/FILE","#,
    r#"("FILE", FILE::run),"#,
    r#".name("FILE".into())"#,
];

#[test]
fn the_pattern_finds_each_way_a_maps_or_numa_maps_path_was_built() {
    let cases: [(Builds, &str, &str); 2] = [
        (builds_maps_path, "maps", "numa_maps"),
        (builds_numa_maps_path, "numa_maps", "maps"),
    ];
    for (builds, file, other) in cases {
        let hits = PROCESS_FILE_PATHS.map(|line| line.replace("FILE", file));
        let other_paths = PROCESS_FILE_PATHS.map(|line| line.replace("FILE", other));
        let names = PROCESS_FILE_NAMES.map(|line| line.replace("FILE", file));
        let hits: Vec<&str> = hits.iter().map(String::as_str).collect();
        let misses: Vec<&str> = other_paths.iter().chain(&names).map(String::as_str).collect();
        assert_pattern(builds, &hits, &misses);
    }
}

#[test]
fn maps_paths_are_built_in_the_maps_reader_only() {
    assert_built_only_in(
        "crates/kernel/src/procfs/maps_read.rs",
        builds_maps_path,
        "read /proc/PID/maps through numasleuth_kernel::procfs::maps::{read, MapsStream}",
    );
}

#[test]
fn numa_maps_paths_are_built_in_the_numa_maps_reader_only() {
    assert_built_only_in(
        "crates/kernel/src/procfs/numa_maps_read.rs",
        builds_numa_maps_path,
        "read /proc/PID/numa_maps through numasleuth_kernel::procfs::numa_maps::NumaMapsFile",
    );
}
