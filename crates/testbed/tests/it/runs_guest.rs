//! QEMU guest `two-nodes-runs`: the incident's bimodal throughput on a
//! real two-node kernel. `tests/victim/bimodal.c` first-touches its hot
//! global on the CPU it starts on, waits for `--release-after` to widen
//! its affinity, moves its work to CPU 0 (node 0), and reports the slow
//! rate when the kernel says the global's page is remote. Started in turn
//! on CPUs 0 and 2, `runs` must find two modes and explain them by the
//! start node and the node of .bss, each 3/3.
//!
//! The rate is modelled from get_mempolicy, not timed (TCG timing means
//! nothing), so the test is deterministic. Needs the same inputs as
//! `guests.rs` (leave them out with `cargo test -- --skip qemu_`, to skip
//! visibly), plus gcc for the static test program:
//!     eval "$(scripts/qemu-kernel.sh)"
//!     export NUMASLEUTH_STATIC_BIN="$(scripts/build-static.sh)"
//!     cargo test -p numasleuth-testbed --test it runs_guest::
//! With NUMASLEUTH_RUNS_TEXT=1 the guest also prints the text report, for
//! the README.

use std::path::Path;

use numasleuth_testbed::check::{command_json, run_checked, Checks};
use numasleuth_testbed::{env, guests, program};
use serde_json::{json, Value};

/// Sampled 1 s after the start: 800 ms after the release for the program to
/// see it and move to CPU 0 (the default 500 ms left 300 ms, which a loaded
/// two-CPU host running TCG guests side by side does not always give), and
/// 2 s before its 3 s of work ends: with the 1.5 s default, a starved
/// host once saw a run exit while `inspect` was still reading it.
const RUNS: &str = "numasleuth runs -n 6 --start-cpus 0,2 --release-after 200ms --settle 1s --metric ops/s";
const BIMODAL: &str = "/bimodal --seconds 3";

fn column(doc: &Value, key: &str) -> Vec<Value> {
    doc["runs"]
        .as_array()
        .map_or(Vec::new(), |runs| runs.iter().map(|r| r[key].clone()).collect())
}

fn explanation<'a>(doc: &'a Value, attribute: &str) -> Option<&'a Value> {
    doc["explanations"]
        .as_array()?
        .iter()
        .find(|e| e["attribute"] == attribute)
}

fn check_runs(c: &mut Checks, doc: &Value) {
    c.eq("schema", doc["schema"].as_str(), Some("numasleuth.runs/1"));
    c.eq(
        "start CPUs",
        column(doc, "start_cpu"),
        [0, 2, 0, 2, 0, 2].map(|v| json!(v)).to_vec(),
    );
    c.eq(
        "start nodes",
        column(doc, "start_node"),
        [0, 1, 0, 1, 0, 1].map(|v| json!(v)).to_vec(),
    );
    c.eq("bimodal", doc["bimodal"].as_bool(), Some(true));
    c.eq("slow cluster", doc["clusters"][0]["label"].as_str(), Some("slow"));
    c.eq("slow runs", doc["clusters"][0]["runs"].clone(), json!([1, 3, 5]));
    c.check(
        doc["clusters"][0]["median"]
            .as_f64()
            .is_some_and(|m| (47_000.0..49_000.0).contains(&m)),
        || format!("slow median: {}", doc["clusters"][0]),
    );
    for run in doc["runs"].as_array().into_iter().flatten() {
        c.check(run["placement_sampled"] == true, || format!("run not sampled: {run}"));
        c.eq(
            "bss node = start node",
            &run["attributes"]["bss_node"],
            &json!(run["start_node"].to_string()),
        );
        c.eq(
            "threads on node 0 after the release",
            run["attributes"]["thread_nodes"].as_str(),
            Some("0"),
        );
    }
    for attribute in ["start_node", "bss_node"] {
        match explanation(doc, attribute) {
            Some(e) => {
                c.eq(&format!("{attribute} separation"), e["separation"].as_f64(), Some(1.0));
                c.eq(&format!("{attribute} slow value"), e["slow"].as_str(), Some("1"));
                c.eq(&format!("{attribute} fast value"), e["fast"].as_str(), Some("0"));
                c.eq(&format!("{attribute} explains"), e["explains"].as_bool(), Some(true));
            }
            None => c.fail(format!("no explanation by {attribute}: {}", doc["explanations"])),
        }
    }
    let verdict = doc["verdict"].to_string();
    for phrase in [
        "⇔ started on node 1 (3/3)",
        ".bss of /bimodal on node 1 (3/3)",
        "fast mode (3 of 6 runs",
    ] {
        c.check(verdict.contains(phrase), || {
            format!("verdict lacks `{phrase}`: {verdict}")
        });
    }
}

#[test]
fn qemu_two_nodes_runs_bimodal_explained_by_start_and_bss_node() {
    let bimodal = program::build_static(
        "qemu guest two-nodes-runs",
        "bimodal.c",
        Path::new(env!("CARGO_TARGET_TMPDIR")).join("bimodal-static"),
        &[],
    );
    let mut spec = guests::two_nodes();
    spec.name = "two-nodes-runs".into();
    spec.extra_files = vec![("bimodal".into(), bimodal)];
    // AutoNUMA would move the hot page by itself, racing the experiment.
    spec.setup =
        vec!["if [ -w /proc/sys/kernel/numa_balancing ]; then echo 0 > /proc/sys/kernel/numa_balancing; fi".into()];
    spec.commands.extend([
        ("runs".into(), format!("{RUNS} --json --svg /tmp/runs.svg -- {BIMODAL}")),
        ("svg".into(), "cat /tmp/runs.svg".into()),
        (
            "never-matches".into(),
            "numasleuth runs -n 4 --metric nosuchline -- /bimodal --seconds 0.1".into(),
        ),
    ]);
    if std::env::var("NUMASLEUTH_RUNS_TEXT").is_ok_and(|v| v == "1") {
        spec.commands.push(("runs.text".into(), format!("{RUNS} -- {BIMODAL}")));
    }
    let host = env::require(&format!("qemu guest {}", spec.name));
    let workdir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("testbed").join(&spec.name);
    run_checked(&host, &spec, &workdir, None, |o, c| {
        let sections = &o.run.transcript.sections;
        if let Some(doc) = command_json(c, sections, "runs") {
            check_runs(c, &doc);
        }
        let svg = sections.get("svg").map_or("", |s| s.text.as_str());
        c.check(
            svg.starts_with("<svg") && svg.matches("<title>run ").count() == 6,
            || format!("svg: {:.200}", svg),
        );
        match sections.get("never-matches") {
            Some(s) => c.eq("runs with a metric that never matches: exit code", s.rc, 2),
            None => c.fail("runs --metric nosuchline printed no result"),
        }
        let stderr = sections.get("never-matches.stderr").map_or("", |s| s.text.as_str());
        c.check(
            stderr.contains("run 1 (of 4, exit code 0) printed no line matching --metric")
                && stderr.contains("| ops/s:"),
            || format!("never-matches stderr: {stderr:?}"),
        );
        if let Some(text) = sections.get("runs.text") {
            env::report(&format!("[testbed] runs text report:\n{}", text.text));
        }
    });
}
