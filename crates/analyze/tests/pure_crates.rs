//! The pure crates (model, analyze, report) must not link a collector or
//! an object-file reader: `../shared/DESIGN.md` keeps side effects and
//! their heavy dependencies out of parse, analyze and report, and issue 11
//! moved the shared data types into `model` so that holds.
//!
//! This walks the normal (not dev) dependencies of each pure crate: our own
//! crates through their Cargo.toml, registry crates through Cargo.lock (a
//! registry package's lock entry lists only what it links). A dependency on
//! probe, symbols, perf-event2, object or addr2line, direct or indirect,
//! fails the test and names the path to it.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

const PURE: [&str; 3] = ["numasleuth-model", "numasleuth-analyze", "numasleuth-report"];
const FORBIDDEN: [&str; 6] = [
    "numasleuth-probe",
    "numasleuth-symbols",
    "perf-event2",
    "perf-event-open-sys2",
    "object",
    "addr2line",
];

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Names in the `[dependencies]` table of a manifest (not dev, not build).
fn normal_dependencies(manifest: &str) -> Vec<String> {
    let mut in_table = false;
    let mut names = Vec::new();
    for line in manifest.lines().map(str::trim) {
        if line.starts_with('[') {
            in_table = line == "[dependencies]";
            continue;
        }
        if !in_table || line.is_empty() || line.starts_with('#') {
            continue;
        }
        let key = line.split(['=', ' ']).next().unwrap_or("");
        let name = key.split('.').next().unwrap_or("");
        if !name.is_empty() {
            names.push(name.to_string());
        }
    }
    names
}

/// Every package in Cargo.lock with the names it depends on.
fn lock_graph(lock: &str) -> BTreeMap<String, BTreeSet<String>> {
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let mut current: Option<String> = None;
    let mut in_deps = false;
    for line in lock.lines().map(str::trim) {
        if line == "[[package]]" {
            current = None;
            in_deps = false;
        } else if let Some(name) = line.strip_prefix("name = ") {
            let name = name.trim_matches('"').to_string();
            graph.entry(name.clone()).or_default();
            current = Some(name);
        } else if line.starts_with("dependencies = [") {
            in_deps = !line.ends_with(']');
        } else if in_deps && line == "]" {
            in_deps = false;
        } else if in_deps {
            let dep = line
                .trim_matches([',', '"'])
                .split(' ')
                .next()
                .unwrap_or("")
                .to_string();
            if let Some(pkg) = &current {
                graph.entry(pkg.clone()).or_default().insert(dep);
            }
        }
    }
    graph
}

/// The path to the first forbidden package reachable from `start`, if any.
fn forbidden_path(start: &str, lock: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
    let root = workspace();
    let mut stack = vec![vec![start.to_string()]];
    let mut seen = BTreeSet::new();
    while let Some(path) = stack.pop() {
        let name = path.last().unwrap().clone();
        if FORBIDDEN.contains(&name.as_str()) {
            return Some(path);
        }
        if !seen.insert(name.clone()) {
            continue;
        }
        let deps: Vec<String> = match name.strip_prefix("numasleuth-") {
            Some(dir) => {
                let manifest = root.join("crates").join(dir).join("Cargo.toml");
                let text = std::fs::read_to_string(&manifest).unwrap_or_else(|e| panic!("{}: {e}", manifest.display()));
                normal_dependencies(&text)
            }
            None => lock.get(&name).map(|d| d.iter().cloned().collect()).unwrap_or_default(),
        };
        for dep in deps {
            let mut next = path.clone();
            next.push(dep);
            stack.push(next);
        }
    }
    None
}

#[test]
fn pure_crates_link_no_collector_or_object_reader() {
    let lock_text = std::fs::read_to_string(workspace().join("Cargo.lock")).expect("Cargo.lock");
    let lock = lock_graph(&lock_text);
    assert!(lock.contains_key("perf-event2"), "the lock parser finds packages");
    for pure in PURE {
        if let Some(path) = forbidden_path(pure, &lock) {
            panic!("{pure} must stay pure but links {}", path.join(" -> "));
        }
    }
}

#[test]
fn the_walk_finds_a_forbidden_dependency_where_there_is_one() {
    let lock_text = std::fs::read_to_string(workspace().join("Cargo.lock")).expect("Cargo.lock");
    let lock = lock_graph(&lock_text);
    // The collectors themselves do link these: the check can fail.
    let probe = forbidden_path("numasleuth-probe", &lock).expect("probe links perf");
    assert_eq!(probe.first().map(String::as_str), Some("numasleuth-probe"));
    let symbols = forbidden_path("numasleuth-cli", &lock).expect("cli links symbols");
    assert!(symbols.len() >= 2, "{symbols:?}");
}

#[test]
fn only_the_dependencies_table_counts() {
    let manifest = "[package]\nname = \"x\"\n\n[dependencies]\nfoo.workspace = true\nbar = \"1\"\n# baz = 1\n\
                    baz = { version = \"2\" }\n\n[dev-dependencies]\nobject = \"0.40\"\n";
    assert_eq!(normal_dependencies(manifest), ["foo", "bar", "baz"]);
}
