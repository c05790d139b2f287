//! `runs` on this machine with real child processes: the metric from the
//! output or wall time, start CPUs taken in turn (and really pinned),
//! placement sampled at the settle time, two modes found and explained,
//! the pinned JSON schema, and every bad input refused with exit 2.

use crate::common;

use common::{exit_2_stderr, json, output, stderr};
use serde_json::Value;

/// The CPUs this test may run on, as the kernel lists them for us (and so
/// for the numasleuth we start).
fn allowed() -> Vec<u64> {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let list = status
        .lines()
        .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))
        .unwrap()
        .trim()
        .to_string();
    list.split(',')
        .flat_map(|part| match part.split_once('-') {
            Some((a, b)) => (a.parse().unwrap()..=b.parse().unwrap()).collect::<Vec<u64>>(),
            None => vec![part.parse().unwrap()],
        })
        .collect()
}

/// Prints the CPU the shell was started on (its whole allowed list, which
/// pinning makes one CPU).
const PRINT_CPU: &str = "echo \"cpu $(grep Cpus_allowed_list /proc/self/status | cut -f2)\"";

fn runs(value: &Value) -> &Vec<Value> {
    value["runs"].as_array().unwrap()
}

#[test]
fn json_schema_is_pinned() {
    let v = json(&[
        "runs",
        "-n",
        "4",
        "--json",
        "--metric",
        "value",
        "--",
        "sh",
        "-c",
        "echo value 10",
    ]);
    assert_eq!(v["schema"], "numasleuth.runs/1");
    assert_eq!(v["metric"]["name"], "value");
    assert_eq!(v["metric"]["lower_is_better"], false);
    assert_eq!(v["metric"]["source"], "output");
    assert_eq!(runs(&v).len(), 4);
    for (i, run) in runs(&v).iter().enumerate() {
        assert_eq!(run["index"], i);
        assert!(run["start_cpu"].is_u64() && run["start_node"].is_u64(), "{run}");
        assert_eq!(run["metric"], 10.0);
        assert_eq!(run["exit_code"], 0);
        assert!(run["wall_s"].as_f64().unwrap() > 0.0);
        assert_eq!(run["attributes"]["start_cpu"], run["start_cpu"].to_string());
        assert_eq!(run["attributes"]["start_node"], run["start_node"].to_string());
        assert!(run["counters"]["minor_faults"].as_u64().unwrap() > 0);
        assert_eq!(run["placement_sampled"], false, "echo exits long before 500 ms");
        assert_eq!(run["cluster"], "all");
    }
    assert_eq!(v["bimodal"], false);
    let clusters = v["clusters"].as_array().unwrap();
    assert_eq!(clusters.len(), 1);
    assert_eq!(clusters[0]["label"], "all");
    assert_eq!(clusters[0]["runs"], serde_json::json!([0, 1, 2, 3]));
    assert_eq!(clusters[0]["median"], 10.0);
    assert!(v["explanations"].as_array().unwrap().is_empty());
    assert!(v["bimodality"]["reason"].as_str().unwrap().contains("one mode"));
    assert!(v["verdict"].is_array() && v["not_observed"].is_array());
}

#[test]
fn text_table_and_verdict_on_stdout_progress_on_stderr() {
    let out = output(&["runs", "-n", "4", "--", "sh", "-c", "echo value 10"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = String::from_utf8(out.stdout.clone()).unwrap();
    // The provenance line, then the report.
    let (provenance, text) = crate::common::provenance_and_report(&text);
    assert!(provenance.contains("live system"), "{provenance}");
    assert!(
        text.starts_with("4 runs of `sh -c echo value 10`; metric: wall time in seconds (lower is better)"),
        "{text}"
    );
    // Wall times of `sh -c echo` on a loaded machine may split (two slow
    // runs of four, one CPU busier than the other); what this test pins is
    // that every run has a row with a mode and that a verdict is printed, so
    // any of the three verdicts, and any of the mode labels, passes. That an
    // unexplained split is never "two modes" is pinned in crates/analyze
    // (runs::verdict_tests).
    let modes: Vec<&str> = text
        .lines()
        .skip_while(|l| !l.starts_with("run "))
        .skip(1)
        .take(4)
        .filter_map(|l| l.split_whitespace().nth(4))
        .collect();
    assert_eq!(modes.len(), 4, "{text}");
    assert!(
        modes.iter().all(|m| ["all", "slow", "fast"].contains(m)),
        "{modes:?}\n{text}"
    );
    assert!(
        text.lines().any(|l| l.starts_with("One mode")
            || l.starts_with("Two modes")
            || l.starts_with("A possible second mode, explained by nothing here")),
        "{text}"
    );
    assert_eq!(stderr(&out).matches("numasleuth: run ").count(), 4);
    // The table numbers runs as the progress line counts them: 1 to 4.
    let table: Vec<&str> = text
        .lines()
        .skip_while(|l| !l.starts_with("run "))
        .skip(1)
        .take(4)
        .filter_map(|l| l.split_whitespace().next())
        .collect();
    assert_eq!(table, ["1", "2", "3", "4"], "{text}");
    for n in 1..=4 {
        assert!(
            stderr(&out).contains(&format!("numasleuth: run {n}/4 ")),
            "{}",
            stderr(&out)
        );
    }
}

#[test]
fn too_few_runs_to_judge_are_refused_before_any_runs() {
    let out = output(&["runs", "-n", "2", "--", "sh", "-c", "echo ran >&2"]);
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert!(
        err.contains("from 4 to 1000") && err.contains("cannot be told apart"),
        "{err}"
    );
    assert!(
        !err.contains("ran") && !err.contains("numasleuth: run "),
        "nothing ran: {err}"
    );
}

#[test]
fn the_value_group_of_the_last_matching_line() {
    let script = "echo took 12.5 ms; echo run 3; echo took 7 ms; echo noise 1";
    let v = json(&[
        "runs",
        "-n",
        "4",
        "--json",
        "--lower-is-better",
        "--metric",
        r"took (?P<value>\S+) ms",
        "--",
        "sh",
        "-c",
        script,
    ]);
    assert_eq!(v["metric"]["lower_is_better"], true);
    assert!(runs(&v).iter().all(|r| r["metric"] == 7.0), "{v}");
    // Without a value group: the first number of the line.
    let v = json(&[
        "runs", "-n", "4", "--json", "--metric", "^run", "--", "sh", "-c", script,
    ]);
    assert!(runs(&v).iter().all(|r| r["metric"] == 3.0), "{v}");
}

#[test]
fn wall_time_is_the_default_metric() {
    let v = json(&["runs", "-n", "4", "--json", "--", "sleep", "0.05"]);
    assert_eq!(v["metric"]["name"], "wall_s");
    assert_eq!(v["metric"]["source"], "wall_time");
    assert_eq!(v["metric"]["lower_is_better"], true);
    for run in runs(&v) {
        assert_eq!(run["metric"], run["wall_s"]);
        assert!(run["wall_s"].as_f64().unwrap() >= 0.05, "{run}");
    }
}

#[test]
fn start_cpus_are_taken_in_turn_and_the_workload_is_really_pinned() {
    let cpus = allowed();
    // Whole rounds over the CPUs, at least two and at least 4 runs.
    let rounds = 4usize.div_ceil(cpus.len()).max(2);
    let n = rounds * cpus.len();
    let v = json(&[
        "runs",
        "-n",
        &n.to_string(),
        "--json",
        "--metric",
        "^cpu",
        "--",
        "sh",
        "-c",
        PRINT_CPU,
    ]);
    let started: Vec<u64> = runs(&v).iter().map(|r| r["start_cpu"].as_u64().unwrap()).collect();
    // spread: every allowed CPU once per round, the same order each round.
    let mut first_round = started[..cpus.len()].to_vec();
    assert!(
        started.chunks(cpus.len()).all(|round| round == first_round),
        "{started:?}"
    );
    first_round.sort_unstable();
    assert_eq!(first_round, cpus);
    for run in runs(&v) {
        assert_eq!(
            run["metric"].as_f64().unwrap(),
            run["start_cpu"].as_f64().unwrap(),
            "{run}"
        );
    }
    // A typed list keeps its order.
    let (a, b) = (cpus[cpus.len() - 1].to_string(), cpus[0].to_string());
    let list = format!("{a},{b}");
    let v = json(&[
        "runs",
        "-n",
        "4",
        "--json",
        "--start-cpus",
        &list,
        "--metric",
        "^cpu",
        "--",
        "sh",
        "-c",
        PRINT_CPU,
    ]);
    let started: Vec<String> = runs(&v).iter().map(|r| r["start_cpu"].to_string()).collect();
    assert_eq!(started, [a.clone(), b.clone(), a, b]);
}

#[test]
fn two_modes_are_found_and_explained_by_the_start_cpu() {
    let cpus = allowed();
    assert!(cpus.len() >= 2, "this test needs two allowed CPUs, has {cpus:?}");
    let (slow, fast) = (cpus[0], cpus[1]);
    // 100 on the first CPU, 150 on the second: higher is better.
    let script = format!("c=$(grep Cpus_allowed_list /proc/self/status | cut -f2); [ \"$c\" = {slow} ] && echo value 100 || echo value 150");
    let list = format!("{slow},{fast}");
    let svg = tempfile::NamedTempFile::new().unwrap();
    let svg_path = svg.path().to_str().unwrap();
    let v = json(&[
        "runs",
        "-n",
        "8",
        "--json",
        "--svg",
        svg_path,
        "--start-cpus",
        &list,
        "--metric",
        "^value",
        "--",
        "sh",
        "-c",
        &script,
    ]);
    assert_eq!(v["bimodal"], true, "{}", v["bimodality"]);
    let clusters = v["clusters"].as_array().unwrap();
    assert_eq!(clusters[0]["label"], "slow");
    assert_eq!(clusters[0]["runs"], serde_json::json!([0, 2, 4, 6]));
    assert_eq!(clusters[0]["median"], 100.0);
    assert_eq!(clusters[1]["label"], "fast");
    let best = &v["explanations"][0];
    assert_eq!(best["attribute"], "start_cpu");
    assert_eq!(best["separation"], 1.0);
    assert_eq!(best["slow"], slow.to_string());
    assert_eq!(best["fast"], fast.to_string());
    let verdict = v["verdict"].to_string();
    assert!(
        verdict.contains(&format!(
            "slow mode (4 of 8 runs, median 100) ⇔ started on CPU {slow} (4/4)"
        )),
        "{verdict}"
    );
    let drawn = std::fs::read_to_string(svg.path()).unwrap();
    assert!(drawn.starts_with("<svg") && drawn.trim_end().ends_with("</svg>"));
    assert_eq!(drawn.matches("<title>run ").count(), 8);
}

#[test]
fn placement_is_sampled_while_the_workload_runs() {
    let v = json(&[
        "runs",
        "-n",
        "4",
        "--json",
        "--settle",
        "50ms",
        "--release-after",
        "20ms",
        "--",
        "sleep",
        "0.4",
    ]);
    for run in runs(&v) {
        assert_eq!(run["placement_sampled"], true, "{run}");
        let attributes = &run["attributes"];
        assert_eq!(attributes["thread_nodes"], run["start_node"].to_string(), "{run}");
        assert!(
            attributes["heap_node"].is_string() || attributes["bss_node"].is_string(),
            "{run}"
        );
        assert!(run["counters"]["cpu_migrations"].is_u64(), "{run}");
        assert!(run["counters"]["cpu_migrations_at_settle"].is_u64(), "{run}");
        assert!(
            run["notes"]
                .as_array()
                .unwrap()
                .iter()
                .all(|n| !n.as_str().unwrap().starts_with("release")),
            "{run}"
        );
    }
    assert!(v["program"].as_str().unwrap().ends_with("sleep"), "{}", v["program"]);
}

#[test]
fn bad_input_is_one_line_and_exit_2() {
    let one_line = |args: &[&str], expected: &str| {
        let err = exit_2_stderr(args);
        let last = err.lines().last().unwrap_or_default();
        assert!(
            last.starts_with("numasleuth: error: ") && last.contains(expected),
            "{args:?}: {err}"
        );
        assert!(!err.contains("panicked"), "{err}");
        err
    };
    one_line(&["runs", "-n", "1", "--", "true"], "from 4 to 1000");
    one_line(&["runs", "-n", "1001", "--", "true"], "from 4 to 1000");
    one_line(
        &["runs", "-n", "4", "--", "/nonexistent/numasleuth-nosuch"],
        "cannot run `/nonexistent/numasleuth-nosuch`: no such command",
    );
    one_line(
        &["runs", "-n", "4", "--metric", "ops(", "--", "true"],
        "invalid --metric pattern `ops(`",
    );
    one_line(
        &["runs", "-n", "4", "--start-cpus", "4095", "--", "true"],
        "start CPU 4095 is not one this process may run on",
    );
    one_line(
        &["runs", "-n", "4", "--start-cpus", "spread,1", "--", "true"],
        "--start-cpus",
    );
    one_line(
        &["runs", "--root", "/nonexistent", "-n", "4", "--", "true"],
        "/nonexistent",
    );
    let err = exit_2_stderr(&["runs", "-n", "4"]);
    assert!(err.starts_with("numasleuth: error: ") && err.contains("CMD"), "{err}");
    // The metric never matches: which run, and its last output lines.
    let err = one_line(
        &[
            "runs",
            "-n",
            "4",
            "--metric",
            "ops/s",
            "--",
            "sh",
            "-c",
            "echo starting; echo done in 3 s",
        ],
        "run 1 (of 4, exit code 0) printed no line matching --metric; its last 2 of 2 output lines are above",
    );
    assert!(err.contains("  | starting\n  | done in 3 s\n"), "{err}");
    // A matching line without a number.
    one_line(
        &["runs", "-n", "4", "--metric", "ops", "--", "sh", "-c", "echo ops: many"],
        "matches --metric but holds no number: `ops: many`",
    );
}
