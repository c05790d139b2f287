//! QEMU guest `two-nodes-bisect`: page-placement bisection on a real
//! two-node kernel. `tests/victim/hotpage.c` runs on CPU 0 (node 0) with a
//! dozen .bss pages on node 0 and writes its rate to a file every 20 ms:
//! 100000 ops/s while its hot global's page is local, 48000 while the
//! kernel says it is remote. `bisect --apply` over .bss must end on the
//! page of `hot_counter`, name it, and leave every page where it was,
//! with no journal left behind.
//!
//! Bad input on the same kernel: a metric command that prints no number,
//! one that fails, and a process that exits mid-bisection (the journal is
//! kept and the message says how to undo).
//!
//! The rate is modelled from get_mempolicy, not timed (TCG timing means
//! nothing), so the test is deterministic. Needs the same inputs as
//! `guests.rs`, plus gcc for the static test program:
//!     eval "$(scripts/qemu-kernel.sh)"
//!     export NUMASLEUTH_STATIC_BIN="$(scripts/build-static.sh)"
//!     cargo test -p numasleuth-testbed --test it bisect_guest::
//! With NUMASLEUTH_BISECT_TEXT=1 the guest also walks the incident in text
//! (inspect, bisect, lines, watch, move, undo on a service whose .bss was
//! first touched on node 1), for the README.

use std::path::Path;

use numasleuth_testbed::check::{command_json, run_checked, Checks};
use numasleuth_testbed::{env, guests, program};
use serde_json::Value;

const PID: &str = "$(cat /tmp/hot.pid)";
const BISECT: &str = "numasleuth bisect $(cat /tmp/hot.pid) --section .bss --metric-cmd \"cat /tmp/rate\" \
                      --settle 300ms --rounds 3";

fn sh(name: &str, command: String) -> (String, String) {
    (name.to_string(), format!("sh -c '{command}'"))
}

fn commands(text: bool) -> Vec<(String, String)> {
    let placement = format!("numasleuth move {PID} --section .bss --to-node 1 --json");
    let mut commands = vec![
        sh("hot-address", "sed -n \"s/.*hot=\\(0x[0-9a-f]*\\).*/\\1/p\" /tmp/hot.out".into()),
        sh("dry", format!("{BISECT} --json")),
        sh("placement-before", placement.clone()),
        sh("bisect", format!("{BISECT} --apply --journal /tmp/b.json --json")),
        sh("journal-left", "ls /tmp/b.json 2>/dev/null; echo end".into()),
        sh("placement-after", placement),
        sh(
            "no-number",
            format!(
                "numasleuth bisect {PID} --section .bss --metric-cmd \"echo no rate here\" --settle 1ms --apply \
                 --journal /tmp/n.json; rc=$?; ls /tmp/n.json 2>/dev/null; exit $rc"
            ),
        ),
        sh(
            "fails",
            format!("numasleuth bisect {PID} --section .bss --metric-cmd \"exit 3\" --settle 1ms --apply --journal /tmp/f.json"),
        ),
        // A second service that stops after 4 s, bisected with 1 s settles:
        // it exits part-way through.
        sh(
            "exits",
            "/hotpage --seconds 4 --rate-file /tmp/rate2 > /tmp/short.out 2>&1 & usleep 300000; \
             numasleuth bisect $! --section .bss --metric-cmd \"cat /tmp/rate2\" --settle 1s --rounds 3 --apply \
             --journal /tmp/x.json; rc=$?; ls /tmp/x.json; exit $rc"
                .into(),
        ),
        // Stopped part-way through a step: every page goes back first. A
        // script's background job has SIGINT ignored (POSIX), and numasleuth
        // keeps it ignored as any program would, so the stop is SIGTERM, which
        // takes the same path as Ctrl-C (the host's stop_cli tests send SIGINT).
        sh(
            "interrupted",
            format!(
                "numasleuth bisect {PID} --section .bss --metric-cmd \"cat /tmp/rate\" --settle 3s --apply \
                 --journal /tmp/i.json --json & b=$!; wait-until 600 50000 \"grep -q 48000 /tmp/rate\"; usleep 500000; \
                 kill -TERM $b; wait $b; rc=$?; ls /tmp/i.json 2>/dev/null; exit $rc"
            ),
        ),
        sh("placement-after-interrupt", format!("numasleuth move {PID} --section .bss --to-node 1 --json")),
    ];
    if text {
        commands.extend(walkthrough());
    }
    commands
}

/// The README's walk through the incident, in text: a service that
/// first-touched its .bss on node 1 and serves from node 0.
fn walkthrough() -> Vec<(String, String)> {
    let w = "$(cat /tmp/walk.pid)";
    vec![
        sh(
            "walk-start",
            "/hotpage --touch-cpu 2 --work-cpu 0 --rate-file /tmp/wrate > /tmp/walk.out 2>&1 & echo $! > /tmp/walk.pid; \
             usleep 500000; cat /tmp/walk.out"
                .into(),
        ),
        sh("walk-rate-before", "cat /tmp/wrate".into()),
        sh("walk-inspect", format!("numasleuth inspect {w}")),
        sh(
            "walk-bisect",
            format!(
                "numasleuth bisect {w} --section .bss --metric-cmd \"cat /tmp/wrate\" --settle 300ms --apply \
                 --journal /tmp/w.json"
            ),
        ),
        sh("walk-lines", format!("numasleuth lines --pid {w} --symbol hot_counter")),
        sh("walk-watch", format!("numasleuth watch {w} --symbol hot_counter --duration 1s")),
        sh(
            "walk-move",
            format!("numasleuth move {w} --symbol hot_counter --to-node 0 --apply --journal /tmp/wm.json"),
        ),
        sh("walk-rate-after", "usleep 300000; cat /tmp/wrate".into()),
        sh("walk-undo", "numasleuth undo /tmp/wm.json".into()),
    ]
}

/// Pages of .bss per node, and the runs of pages not on node 1 with
/// their node, from `move --to-node 1`'s dry run: page by page.
fn placement(doc: &Value) -> Value {
    serde_json::json!([doc["pages_by_node"], doc["to_move"]])
}

fn check_bisect(c: &mut Checks, doc: &Value, hot: &str) {
    c.eq("schema", doc["schema"].as_str(), Some("numasleuth.bisect/1"));
    c.eq("applied", doc["applied"].as_bool(), Some(true));
    c.eq("verdict", doc["verdict"].as_str(), Some("page"));
    c.eq("baseline", doc["baseline"]["median"].as_f64(), Some(100_000.0));
    let steps = doc["steps"].as_array().cloned().unwrap_or_default();
    c.check(steps.len() >= 3, || format!("only {} steps", steps.len()));
    if let Some(first) = steps.first() {
        c.eq(
            "first step moves every candidate",
            &first["pages"],
            &doc["candidate_pages"],
        );
        c.eq("first step metric", first["metric"].as_f64(), Some(48_000.0));
        c.eq("first step changed", first["changed"].as_bool(), Some(true));
    }
    c.check(doc["candidate_pages"].as_u64() >= Some(12), || {
        format!("candidate pages: {}", doc["candidate_pages"])
    });
    let culprits = doc["culprit_pages"].as_array().cloned().unwrap_or_default();
    c.eq("one culprit page", culprits.len(), 1);
    if let Some(page) = culprits.first() {
        c.eq("culprit address", page["address"].as_str(), Some(hot));
        c.eq("culprit home node", page["home_node"].as_u64(), Some(0));
        c.eq("culprit away node", page["away_node"].as_u64(), Some(1));
        c.eq(
            "culprit symbols",
            page["symbols"].clone(),
            serde_json::json!(["hot_counter"]),
        );
    }
    c.eq("restored", doc["restored"].as_bool(), Some(true));
    c.eq("journal", doc["journal"].clone(), Value::Null);
    c.eq("still away", doc["restore"]["still_away"].as_u64(), Some(0));
    c.eq("home", &doc["restore"]["home"], &doc["restore"]["pages"]);
}

fn stderr<'a>(
    sections: &'a std::collections::BTreeMap<String, numasleuth_testbed::console::Section>,
    name: &str,
) -> &'a str {
    sections.get(&format!("{name}.stderr")).map_or("", |s| s.text.as_str())
}

#[test]
fn qemu_two_nodes_bisect_names_the_hot_page_and_restores_every_page() {
    let hotpage = program::build_static(
        "qemu guest two-nodes-bisect",
        "hotpage.c",
        Path::new(env!("CARGO_TARGET_TMPDIR")).join("hotpage-static"),
        &[],
    );
    let mut spec = guests::two_nodes();
    spec.name = "two-nodes-bisect".into();
    spec.extra_files = vec![("hotpage".into(), hotpage)];
    // AutoNUMA would move the hot page by itself, racing the experiment.
    spec.setup = vec![
        "if [ -w /proc/sys/kernel/numa_balancing ]; then echo 0 > /proc/sys/kernel/numa_balancing; fi".into(),
        "/hotpage > /tmp/hot.out 2>&1 &".into(),
        "wait-until 300 100000 \"grep -q pid= /tmp/hot.out && [ -e /tmp/rate ]\"".into(),
        "record-pid hot".into(),
    ];
    let text = std::env::var("NUMASLEUTH_BISECT_TEXT").is_ok_and(|v| v == "1");
    spec.commands.extend(commands(text));
    let host = env::require(&format!("qemu guest {}", spec.name));
    let workdir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("testbed").join(&spec.name);
    run_checked(&host, &spec, &workdir, None, |o, c| {
        let sections = &o.run.transcript.sections;
        let hot = sections.get("hot-address").map_or("", |s| s.text.trim()).to_string();
        c.check(hot.starts_with("0x"), || format!("hot address: {hot:?}"));
        if let Some(dry) = command_json(c, sections, "dry") {
            c.eq("dry run applied", dry["applied"].as_bool(), Some(false));
            c.eq("dry run steps", dry["steps"].as_array().map(Vec::len), Some(0));
            c.eq("dry run reading", dry["baseline"]["median"].as_f64(), Some(100_000.0));
        }
        if let Some(doc) = command_json(c, sections, "bisect") {
            check_bisect(c, &doc, &hot);
        }
        match sections.get("journal-left") {
            Some(s) => c.eq("journal after bisect", s.text.trim(), "end"),
            None => c.fail("no journal-left section"),
        }
        let before = command_json(c, sections, "placement-before").map(|d| placement(&d));
        let after = command_json(c, sections, "placement-after").map(|d| placement(&d));
        c.eq("every .bss page where it was", &after, &before);
        let interrupted = command_json(c, sections, "placement-after-interrupt").map(|d| placement(&d));
        c.eq("every .bss page where it was after Ctrl-C", &interrupted, &before);
        let stopped = sections.get("interrupted");
        c.eq("interrupted: exit code", stopped.map(|s| s.rc), Some(2));
        c.check(stopped.is_some_and(|s| !s.text.contains("/tmp/i.json")), || {
            format!("interrupted: journal kept: {stopped:?}")
        });
        let doc: Option<Value> = stopped.and_then(|s| serde_json::from_str(&s.text).ok());
        c.check(doc.is_some(), || format!("interrupted: no JSON: {stopped:?}"));
        if let Some(doc) = doc {
            c.eq("interrupted: stopped", doc["stopped"].as_str(), Some("interrupted"));
            c.eq("interrupted: restored", doc["restored"].as_bool(), Some(true));
            c.eq("interrupted: journal", doc["journal"].clone(), Value::Null);
            // Interrupted half a second after the program's rate fell to
            // 48000 (its hot page is away: step 1 has moved the set), so in
            // step 1's 3 s settle: every page was away, then brought back.
            // A fixed 7.5 s from the start fell in the baseline on a loaded
            // host; the journal is no sign, as it is written at the start.
            c.check(doc["sets_moved"].as_u64() >= Some(1), || {
                format!("interrupted before any page moved: {doc}")
            });
        }
        c.check(stderr(sections, "interrupted").contains("interrupted"), || {
            format!("interrupted stderr: {:?}", stderr(sections, "interrupted"))
        });
        c.check(before.as_ref().is_some_and(|b| b[0]["0"].as_u64() >= Some(12)), || {
            format!(".bss before: {before:?}")
        });
        for (name, want) in [
            ("no-number", "printed no number; its last lines: no rate here"),
            ("fails", "failed (exit status 3)"),
        ] {
            let rc = sections.get(name).map(|s| s.rc);
            c.eq(&format!("{name}: exit code"), rc, Some(2));
            let err = stderr(sections, name);
            c.check(err.contains(want) && err.lines().count() == 1, || {
                format!("{name} stderr: {err:?}")
            });
        }
        c.check(
            sections
                .get("no-number")
                .is_some_and(|s| !s.text.contains("/tmp/n.json")),
            || "the journal of a bisection that moved nothing was kept".into(),
        );
        let exits = sections.get("exits");
        c.eq("exits mid-bisection: exit code", exits.map(|s| s.rc), Some(2));
        c.check(exits.is_some_and(|s| s.text.contains("/tmp/x.json")), || {
            format!("journal not kept when the process exited: {exits:?}")
        });
        let err = stderr(sections, "exits");
        c.check(
            err.contains("exited during the bisection") && err.contains("numasleuth undo /tmp/x.json"),
            || format!("exits stderr: {err:?}"),
        );
        for (name, section) in sections.iter().filter(|(name, _)| name.starts_with("walk-")) {
            env::report(&format!("[testbed] {name} (exit {}):\n{}", section.rc, section.text));
        }
    });
}
