//! The files in deploy/: the Grafana dashboard's structure and that its
//! PromQL names only metrics the exporter really emits; the Prometheus
//! example checked by Prometheus's own `promtool`; the alerting rules run
//! through `promtool test rules` and held to emitted metrics too; and the
//! privileges the systemd unit grants (none without --pid, CAP_SYS_PTRACE
//! with it).

use crate::common;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

use common::{numasleuth, require_root};
use serde_json::Value;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Metric names in the sample lines of `serve --once --textfile`.
fn emitted_by(global: &[&str], serve: &[&str]) -> BTreeSet<String> {
    let dir = tempfile::tempdir().unwrap();
    let output = numasleuth()
        .args(global)
        .arg("serve")
        .args(serve)
        .args(["--once", "--textfile"])
        .arg(dir.path())
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let text = std::fs::read_to_string(dir.path().join("numasleuth.prom")).unwrap();
    text.lines()
        .filter(|l| !l.starts_with('#'))
        .filter_map(|l| l.split(['{', ' ']).next())
        .map(str::to_string)
        .collect()
}

/// What the exporter emits on this machine with `--pid` of this test, and
/// on the zone-reclaim capture (which has a doctor finding).
fn emitted() -> BTreeSet<String> {
    let me = std::process::id().to_string();
    let fixture = repo().join("tests/fixtures/zone-reclaim-incident");
    let mut names = emitted_by(&[], &["--pid", &me]);
    names.extend(emitted_by(&["--root", fixture.to_str().unwrap()], &[]));
    names
}

/// Removes `open`…`close` spans (label matchers, ranges) from PromQL.
fn strip(expr: &str, open: char, close: char) -> String {
    let mut out = String::new();
    let mut depth = 0;
    for c in expr.chars() {
        match c {
            c if c == open => depth += 1,
            c if c == close && depth > 0 => depth -= 1,
            c if depth == 0 => out.push(c),
            _ => {}
        }
    }
    out
}

/// Metric names a PromQL expression reads: identifiers that are not
/// functions, keywords, label lists of `by`/`without`, strings, label
/// matchers, ranges or `$variables`.
fn metric_names(expr: &str) -> Vec<String> {
    let mut text = String::new();
    let mut in_string = false;
    for c in expr.chars() {
        if c == '"' {
            in_string = !in_string;
        } else if !in_string {
            text.push(c);
        }
    }
    let text = strip(&strip(&text, '{', '}'), '[', ']');
    let chars: Vec<char> = text.chars().collect();
    let mut names = Vec::new();
    let mut i = 0;
    let mut skip_group = false;
    while i < chars.len() {
        let c = chars[i];
        if c.is_ascii_alphabetic() || c == '_' {
            let start = i;
            while i < chars.len() && (chars[i].is_ascii_alphanumeric() || chars[i] == '_' || chars[i] == ':') {
                i += 1;
            }
            let word: String = chars[start..i].iter().collect();
            let variable = start > 0 && chars[start - 1] == '$';
            let next = chars[i..].iter().find(|c| !c.is_whitespace());
            if matches!(word.as_str(), "by" | "without" | "on" | "ignoring") {
                skip_group = true;
            } else if !variable && next != Some(&'(') && !skip_group && !is_keyword(&word) {
                names.push(word);
            }
            continue;
        }
        if c == ')' {
            skip_group = false;
        }
        i += 1;
    }
    names
}

/// Operators and aggregations, which may be followed by `by (…)` rather
/// than `(`.
fn is_keyword(word: &str) -> bool {
    matches!(
        word,
        "and"
            | "or"
            | "unless"
            | "bool"
            | "offset"
            | "group_left"
            | "group_right"
            | "sum"
            | "min"
            | "max"
            | "avg"
            | "count"
            | "group"
            | "stddev"
            | "stdvar"
            | "topk"
            | "bottomk"
            | "quantile"
            | "count_values"
    )
}

#[test]
fn promql_names_are_found() {
    assert_eq!(
        metric_names(r#"sum by (instance, node) (rate(numasleuth_x_total{a="b c"}[$__rate_interval])) / on(node) y"#),
        ["numasleuth_x_total", "y"]
    );
}

#[test]
fn grafana_dashboard_has_the_panels_and_only_emitted_metrics() {
    let path = repo().join("deploy/grafana/numasleuth-dashboard.json");
    let dashboard: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    for key in ["uid", "title", "schemaVersion", "panels", "templating"] {
        assert!(!dashboard[key].is_null(), "no {key}");
    }
    let panels = dashboard["panels"].as_array().unwrap();
    let emitted = emitted();
    let mut used = BTreeSet::new();
    let mut ids = BTreeSet::new();
    for panel in panels {
        assert!(ids.insert(panel["id"].as_u64().unwrap()), "duplicate panel id");
        assert!(panel["title"].as_str().is_some_and(|t| !t.is_empty()));
        for key in ["x", "y", "w", "h"] {
            assert!(panel["gridPos"][key].is_u64(), "{}: gridPos.{key}", panel["title"]);
        }
        if panel["type"] == "row" {
            continue;
        }
        let targets = panel["targets"]
            .as_array()
            .unwrap_or_else(|| panic!("{} has no targets", panel["title"]));
        assert!(!targets.is_empty());
        for target in targets {
            let expr = target["expr"].as_str().unwrap();
            for name in metric_names(expr) {
                assert!(
                    emitted.contains(&name),
                    "{expr}: {name} is not emitted (emitted: {emitted:?})"
                );
                used.insert(name);
            }
        }
    }
    // What the issue asks the dashboard to show.
    for needed in [
        "numasleuth_node_memory_free_bytes",
        "numasleuth_node_watermark_bytes",
        "numasleuth_node_numa_miss_total",
        "numasleuth_node_numa_foreign_total",
        "numasleuth_reclaim_scan_total",
        "numasleuth_finding",
        "numasleuth_process_remote_ratio",
    ] {
        assert!(used.contains(needed), "the dashboard does not show {needed}");
    }
    let variable = dashboard["templating"]["list"][0]["definition"].as_str().unwrap();
    assert_eq!(variable, "label_values(numasleuth_node_memory_free_bytes, instance)");
}

#[test]
fn prometheus_example_passes_promtool() {
    let config = repo().join("deploy/prometheus/numasleuth.yml");
    let output = Command::new("promtool")
        .args(["check", "config"])
        .arg(&config)
        .output()
        .unwrap_or_else(|e| panic!("cannot run promtool ({e}): install Debian's prometheus package"));
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
}

/// The PromQL of every `expr:` in a rules file: inline, or the block after
/// `expr: |` (the lines indented deeper than `expr:`).
fn rule_exprs(yaml: &str) -> Vec<String> {
    let lines: Vec<&str> = yaml.lines().collect();
    let mut exprs = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let Some((indent, rest)) = line.split_once("expr:") else {
            continue;
        };
        if !indent.trim().is_empty() {
            continue;
        }
        let rest = rest.trim();
        if rest != "|" {
            exprs.push(rest.to_string());
            continue;
        }
        let block: Vec<&str> = lines[i + 1..]
            .iter()
            .take_while(|l| l.len() - l.trim_start().len() > indent.len())
            .map(|l| l.trim())
            .collect();
        exprs.push(block.join(" "));
    }
    exprs
}

#[test]
fn alerting_rules_pass_promtool_test_rules_and_read_only_emitted_metrics() {
    let dir = repo().join("deploy/prometheus");
    let output = Command::new("promtool")
        .args(["test", "rules", "numasleuth-alerts.test.yml"])
        .current_dir(&dir)
        .output()
        .unwrap_or_else(|e| panic!("cannot run promtool ({e}): install Debian's prometheus package"));
    assert!(
        output.status.success(),
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    let rules = std::fs::read_to_string(dir.join("numasleuth-alerts.yml")).unwrap();
    let exprs = rule_exprs(&rules);
    assert_eq!(exprs.len(), rules.matches("- alert:").count(), "{exprs:?}");
    let emitted = emitted();
    let mut used = BTreeSet::new();
    for expr in &exprs {
        for name in metric_names(expr) {
            assert!(
                emitted.contains(&name),
                "{expr}: {name} is not emitted (emitted: {emitted:?})"
            );
            used.insert(name);
        }
    }
    // What the issue asks alerts for: watermark pressure, off-node IRQs,
    // remote share, thread hopping.
    for needed in [
        "numasleuth_node_watermark_bytes",
        "numasleuth_irq_off_node",
        "numasleuth_process_remote_ratio",
        "numasleuth_process_thread_node_moves_total",
    ] {
        assert!(used.contains(needed), "no alert reads {needed}");
    }
}

/// `setpriv` as nobody with exactly `caps` (e.g. "" or ",+sys_ptrace").
fn as_nobody(caps: &str, dir: &Path, pid: u32) -> String {
    let all = format!("-all{caps}");
    let output = Command::new("setpriv")
        .args(["--reuid=65534", "--regid=65534", "--clear-groups"])
        .arg(format!("--inh-caps={all}"))
        .arg(format!("--ambient-caps={all}"))
        .arg(format!("--bounding-set={all}"))
        .arg(assert_cmd::cargo::cargo_bin("numasleuth"))
        .args(["serve", "--once", "--pid", &pid.to_string(), "--textfile"])
        .arg(dir)
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    std::fs::read_to_string(dir.join("numasleuth.prom")).unwrap()
}

#[test]
fn the_unit_s_capabilities_are_what_the_reads_need() {
    require_root("runs serve as another user with chosen capabilities");
    let dir = tempfile::tempdir().unwrap();
    // The exporter's own directory, as the unit's StateDirectory would be:
    // a directory every user could write is refused (docs/security.md).
    std::os::unix::fs::chown(dir.path(), Some(65534), Some(65534)).unwrap();
    std::fs::set_permissions(dir.path(), std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let mut target = Command::new("sleep").arg("30").spawn().unwrap();
    let pid = target.id();
    // No capability: everything but the root-owned --pid is readable.
    let text = as_nobody("", dir.path(), pid);
    let errors: Vec<&str> = text
        .lines()
        .filter(|l| l.starts_with("numasleuth_collect_errors{"))
        .collect();
    assert_eq!(
        errors,
        [format!("numasleuth_collect_errors{{source=\"pid {pid}\"}} 1").as_str()]
    );
    assert!(text.contains("numasleuth_node_memory_free_bytes{node=\"0\"}"));
    // CAP_SYS_PTRACE alone opens the root-owned process.
    let text = as_nobody(",+sys_ptrace", dir.path(), pid);
    assert!(
        !text.lines().any(|l| l.starts_with("numasleuth_collect_errors{")),
        "{text}"
    );
    assert!(text.contains(&format!(
        "numasleuth_process_remote_ratio{{pid=\"{pid}\",comm=\"sleep\"}}"
    )));
    let _ = target.kill();
    let _ = target.wait();
    let unit = std::fs::read_to_string(repo().join("deploy/systemd/numasleuth-serve.service")).unwrap();
    assert!(unit.lines().any(|l| l == "AmbientCapabilities=CAP_SYS_PTRACE"));
    assert!(unit.lines().any(|l| l == "DynamicUser=yes"));
}
