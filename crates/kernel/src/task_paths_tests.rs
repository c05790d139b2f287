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

/// Whether a literal builds a path to a process's `maps` (`numa_maps`,
/// `smaps` and `map_files` are other files). As above, sentences and globs
/// only name it.
fn builds_maps_path(before: &str, literal: &str) -> bool {
    if before.trim_end().ends_with("join(") && literal == "maps" {
        return true;
    }
    if literal.contains(char::is_whitespace) || literal.contains('*') || !literal.contains('/') {
        return false;
    }
    let parts: Vec<&str> = literal.split('/').collect();
    let per_process = |p: &str| p.starts_with('{') || p == "self" || p.parse::<u32>().is_ok();
    parts.len() >= 2 && parts[parts.len() - 1] == "maps" && per_process(parts[parts.len() - 2])
}

/// Whether a literal builds a path to a process's `numa_maps`. As above,
/// sentences and globs only name it.
fn builds_numa_maps_path(before: &str, literal: &str) -> bool {
    if before.trim_end().ends_with("join(") && literal == "numa_maps" {
        return true;
    }
    if literal.contains(char::is_whitespace) || literal.contains('*') || !literal.contains('/') {
        return false;
    }
    let parts: Vec<&str> = literal.split('/').collect();
    let per_process = |p: &str| p.starts_with('{') || p == "self" || p.parse::<u32>().is_ok();
    parts.len() >= 2 && parts[parts.len() - 1] == "numa_maps" && per_process(parts[parts.len() - 2])
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
    for line in [
        r#"let entries = std::fs::read_dir(format!("/proc/{pid}/task")).ok()?;"#,
        r#"root.read(&format!("proc/{pid}/task/{tid}/stat"))"#,
        r#"std::fs::read_to_string(format!("/proc/{pid}/stat"))"#,
        r#"self.root.exists(&format!("proc/{pid}/task/{tid}"))"#,
        r#"let stat = fs::read(entry.path().join("stat"));"#,
        r#"fs::read("/proc/self/stat")"#,
    ] {
        assert!(
            literals(line).iter().any(|(b, l)| builds_task_path(b, l)),
            "missed {line}"
        );
    }
    for line in [
        r#"stat::read(root, "proc/stat")"#,
        r#"format!("/proc/{}/task/*/stat", model.pid)"#,
        r#"say!("sampling /proc/PID/task/*/stat instead") // "proc/{pid}/task""#,
        r#"[who, "task", _] => owner(who, opener)?,"#,
        r#"format!("{ctx}/0/schemes/0/action"), "stat".into()"#,
    ] {
        assert!(
            !literals(line).iter().any(|(b, l)| builds_task_path(b, l)),
            "flagged {line}"
        );
    }
}

#[test]
fn task_and_stat_paths_are_built_here_only() {
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let found = paths_elsewhere(&workspace, "crates/kernel/src/task.rs", builds_task_path);
    assert!(
        found.is_empty(),
        "read threads and their stat through numasleuth_kernel::task, not by hand:\n{}",
        found.join("\n")
    );
}

#[test]
fn the_pattern_finds_each_way_a_maps_path_was_built() {
    for line in [
        r#"LineStream::open(root, &format!("proc/{pid}/maps"))"#,
        r#"let path = format!("proc/{}/maps", pid);"#,
        r#"std::fs::read_to_string("/proc/self/maps")"#,
        r#"fs::read(format!("/proc/{pid}/task/{tid}/maps"))"#,
        r#"let text = fs::read(dir.join("maps"));"#,
    ] {
        assert!(
            literals(line).iter().any(|(b, l)| builds_maps_path(b, l)),
            "missed {line}"
        );
    }
    for line in [
        r#"LineStream::open(root, &format!("proc/{pid}/numa_maps"))"#,
        r#"format!("/proc/{pid}/map_files/{:x}-{:x}", start, end)"#,
        r#"bail!("no mapping in /proc/{pid}/maps holds it")"#,
        r#"LockFile::Smaps => "/proc/PID/smaps","#,
        r#"("maps", maps::run),"#,
    ] {
        assert!(
            !literals(line).iter().any(|(b, l)| builds_maps_path(b, l)),
            "flagged {line}"
        );
    }
}

#[test]
fn maps_paths_are_built_in_the_maps_reader_only() {
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let found = paths_elsewhere(&workspace, "crates/kernel/src/procfs/maps_read.rs", builds_maps_path);
    assert!(
        found.is_empty(),
        "read /proc/PID/maps through numasleuth_kernel::procfs::maps::{{read, MapsStream}}, not by hand:\n{}",
        found.join("\n")
    );
}

#[test]
fn the_pattern_finds_each_way_a_numa_maps_path_was_built() {
    for line in [
        r#"LineStream::open(root, &format!("proc/{pid}/numa_maps"))"#,
        r#"let numa_path = format!("proc/{}/numa_maps", pid);"#,
        r#"std::fs::read_to_string("/proc/self/numa_maps")"#,
        r#"fs::read(format!("/proc/{pid}/task/{tid}/numa_maps"))"#,
        r#"let text = fs::read(dir.join("numa_maps"));"#,
    ] {
        assert!(
            literals(line).iter().any(|(b, l)| builds_numa_maps_path(b, l)),
            "missed {line}"
        );
    }
    for line in [
        r#"LineStream::open(root, &format!("proc/{pid}/maps"))"#,
        r#"Evidence::new(format!("/proc/{}/numa_maps walk", pid), text)"#,
        r#"bail!("no line in /proc/{pid}/numa_maps holds it")"#,
        r#"LockFile::NumaMaps => "/proc/PID/numa_maps","#,
        r#"("numa_maps", numa_maps::run),"#,
        r#".name("numa_maps".into())"#,
    ] {
        assert!(
            !literals(line).iter().any(|(b, l)| builds_numa_maps_path(b, l)),
            "flagged {line}"
        );
    }
}

#[test]
fn numa_maps_paths_are_built_in_the_numa_maps_reader_only() {
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let found = paths_elsewhere(
        &workspace,
        "crates/kernel/src/procfs/numa_maps_read.rs",
        builds_numa_maps_path,
    );
    assert!(
        found.is_empty(),
        "read /proc/PID/numa_maps through numasleuth_kernel::procfs::numa_maps::NumaMapsFile, not by hand:\n{}",
        found.join("\n")
    );
}
