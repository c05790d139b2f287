//! The pure crates (parse, model, analyze, report, docs) link only what is
//! allowed: `../shared/DESIGN.md` keeps side effects and their heavy
//! dependencies out of parse, analyze and report.
//!
//! Two checks on the graph `cargo metadata` resolves (normal dependencies,
//! not dev or build, for this host):
//! - each pure crate's direct dependencies are an allow-list: a new one
//!   fails until it is added to [`ALLOWED`] with its reason;
//! - no file reader, archive code, collector, object-file reader or
//!   terminal backend is reachable from a pure crate, however indirectly
//!   ([`FORBIDDEN`]), and the failure names the path to it.

use std::collections::{BTreeMap, BTreeSet};
use std::process::Command;

use serde_json::Value;

const PURE: [&str; 5] = [
    "numasleuth-parse",
    "numasleuth-model",
    "numasleuth-analyze",
    "numasleuth-report",
    "numasleuth-docs",
];

/// (pure crate, direct dependency, why it may link it).
const ALLOWED: &[(&str, &str, &str)] = &[
    ("numasleuth-parse", "serde", "serialisable readings"),
    ("numasleuth-parse", "thiserror", "typed errors"),
    ("numasleuth-model", "numasleuth-parse", "the readings it types"),
    ("numasleuth-model", "serde", "serialisable data types"),
    ("numasleuth-model", "serde_json", "JSON values in evidence"),
    ("numasleuth-model", "thiserror", "typed errors"),
    ("numasleuth-analyze", "numasleuth-parse", "the readings it judges"),
    ("numasleuth-analyze", "numasleuth-model", "the types it judges"),
    ("numasleuth-analyze", "serde", "serialisable findings"),
    ("numasleuth-analyze", "serde_json", "JSON evidence"),
    ("numasleuth-analyze", "regex", "`runs --metric` patterns"),
    ("numasleuth-analyze", "hdrhistogram", "probe-latency percentiles"),
    ("numasleuth-analyze", "thiserror", "typed errors"),
    (
        "numasleuth-report",
        "numasleuth-parse",
        "escaping untrusted text for terminals",
    ),
    ("numasleuth-report", "numasleuth-model", "the types it renders"),
    ("numasleuth-report", "numasleuth-analyze", "the findings it renders"),
    ("numasleuth-report", "serde", "JSON documents"),
    ("numasleuth-report", "serde_json", "JSON documents"),
    ("numasleuth-report", "plotters", "SVG charts"),
    ("numasleuth-report", "ratatui-core", "top's view, drawn on any backend"),
    ("numasleuth-report", "ratatui-widgets", "top's tables and text"),
    ("numasleuth-report", "prometheus-client", "OpenMetrics text"),
    ("numasleuth-report", "unicode-width", "column widths of wide characters"),
    ("numasleuth-report", "thiserror", "typed errors"),
    ("numasleuth-docs", "clap", "the command definition it documents"),
    ("numasleuth-docs", "clap_complete", "shell completion scripts"),
    ("numasleuth-docs", "clap_mangen", "roff man pages"),
    ("numasleuth-docs", "roff", "the EXAMPLES and EXIT STATUS sections"),
    ("numasleuth-docs", "thiserror", "typed errors"),
];

/// Never reachable from a pure crate. (libc is not on it: ratatui-widgets
/// reaches it through `time`; the allow-list keeps it off every pure
/// crate's direct dependencies, so none of them calls the system.)
const FORBIDDEN: &[&str] = &[
    "numasleuth-kernel",
    "numasleuth-archive",
    "tar",
    "flate2",
    "tempfile",
    "numasleuth-probe",
    "numasleuth-measure",
    "numasleuth-symbols",
    "numasleuth-change",
    "perf-event2",
    "perf-event-open-sys2",
    "object",
    "addr2line",
    "crossterm",
    "ratatui-crossterm",
    "mio",
    "signal-hook",
];

/// Package name -> the names of its normal dependencies, for this host.
fn normal_graph() -> BTreeMap<String, BTreeSet<String>> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let manifest = concat!(env!("CARGO_MANIFEST_DIR"), "/../../Cargo.toml");
    let host = host_triple().expect("the host's target triple (rustc -vV)");
    let out = Command::new(cargo)
        .args(["metadata", "--format-version", "1", "--locked", "--offline"])
        .args(["--filter-platform", &host, "--manifest-path", manifest])
        .output()
        .expect("cargo metadata runs");
    assert!(
        out.status.success(),
        "cargo metadata: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: Value = serde_json::from_slice(&out.stdout).expect("cargo metadata prints JSON");
    graph_of(&doc)
}

fn host_triple() -> Option<String> {
    let out = Command::new("rustc").arg("-vV").output().ok()?;
    let text = String::from_utf8(out.stdout).ok()?;
    text.lines().find_map(|l| l.strip_prefix("host: ")).map(str::to_string)
}

fn graph_of(doc: &Value) -> BTreeMap<String, BTreeSet<String>> {
    let names: BTreeMap<&str, &str> = doc["packages"]
        .as_array()
        .expect("packages")
        .iter()
        .map(|p| (p["id"].as_str().unwrap(), p["name"].as_str().unwrap()))
        .collect();
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for node in doc["resolve"]["nodes"].as_array().expect("resolve.nodes") {
        let name = names[node["id"].as_str().unwrap()].to_string();
        let deps = node["deps"].as_array().expect("deps").iter().filter(|d| {
            let kinds = d["dep_kinds"].as_array().map(Vec::as_slice).unwrap_or_default();
            kinds.iter().any(|k| k["kind"].is_null())
        });
        let entry = graph.entry(name).or_default();
        entry.extend(deps.map(|d| names[d["pkg"].as_str().unwrap()].to_string()));
    }
    graph
}

/// The path from `start` to the first forbidden package reachable, if any.
fn forbidden_path(start: &str, graph: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
    let mut stack = vec![vec![start.to_string()]];
    let mut seen = BTreeSet::new();
    while let Some(path) = stack.pop() {
        let name = path.last().unwrap().clone();
        if FORBIDDEN.contains(&name.as_str()) {
            return Some(path);
        }
        if seen.insert(name.clone()) {
            for dep in graph.get(&name).into_iter().flatten() {
                stack.push(path.iter().cloned().chain([dep.clone()]).collect());
            }
        }
    }
    None
}

#[test]
fn pure_crates_link_only_their_allowed_dependencies() {
    let graph = normal_graph();
    for pure in PURE {
        let allowed: BTreeSet<&str> = ALLOWED.iter().filter(|a| a.0 == pure).map(|a| a.1).collect();
        let direct = graph.get(pure).unwrap_or_else(|| panic!("{pure} is in the workspace"));
        let extra: Vec<&String> = direct.iter().filter(|d| !allowed.contains(d.as_str())).collect();
        assert!(
            extra.is_empty(),
            "{pure} links {extra:?}: add each to ALLOWED with why, or drop it"
        );
        if let Some(path) = forbidden_path(pure, &graph) {
            panic!("{pure} must stay pure but links {}", path.join(" -> "));
        }
    }
}

#[test]
fn the_checks_fail_where_they_should() {
    let graph = normal_graph();
    // The collectors and the CLI do link these: the walk can fail.
    let probe = forbidden_path("numasleuth-probe", &graph).expect("probe is forbidden itself");
    assert_eq!(probe, ["numasleuth-probe"]);
    // The readers link the archive code and libc, whose types parse gives.
    let kernel = forbidden_path("numasleuth-kernel", &graph).expect("kernel is forbidden itself");
    assert_eq!(kernel, ["numasleuth-kernel"]);
    assert!(graph["numasleuth-kernel"].contains("numasleuth-parse"));
    let archive = forbidden_path("numasleuth-archive", &graph).expect("the archive is forbidden itself");
    assert_eq!(archive, ["numasleuth-archive"]);
    assert!(graph["numasleuth-kernel"].contains("numasleuth-archive"));
    let cli = forbidden_path("numasleuth", &graph).expect("the CLI links collectors");
    assert!(cli.len() >= 2, "{cli:?}");
    // cli's direct dependencies are not all on any pure crate's list.
    let cli_direct = &graph["numasleuth"];
    assert!(
        cli_direct.iter().any(|d| !ALLOWED.iter().any(|a| a.1 == d)),
        "{cli_direct:?}"
    );
}

/// The archive format sits below kernel (kernel's snapshot glue calls it):
/// it reaches no reader and no crate above parse.
#[test]
fn the_archive_crate_sits_below_kernel() {
    let graph = normal_graph();
    let workspace_crates: Vec<&String> = graph["numasleuth-archive"]
        .iter()
        .filter(|d| d.starts_with("numasleuth-"))
        .collect();
    assert_eq!(workspace_crates, ["numasleuth-parse"]);
}

#[test]
fn no_collector_links_analyze() {
    // Collectors return observations and never decide (docs/architecture.md):
    // a judgement they need is handed to them by the caller, as probe's
    // memory-signal sampler is handed analyze's detector.
    let graph = normal_graph();
    for collector in [
        "numasleuth-probe",
        "numasleuth-measure",
        "numasleuth-symbols",
        "numasleuth-decode",
    ] {
        let direct = graph
            .get(collector)
            .unwrap_or_else(|| panic!("{collector} is in the workspace"));
        assert!(
            !direct.contains("numasleuth-analyze"),
            "{collector} links numasleuth-analyze: move what it needs down to model, or up to app"
        );
    }
}
