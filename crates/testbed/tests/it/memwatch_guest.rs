//! QEMU guest `two-nodes-memwatch`: memwatch and serve on a real two-node
//! kernel under live pressure. `tests/victim/pressure.c` prefers node 1
//! and touches more memory than node 1 has, so node 1 falls to its low
//! watermark and the kernel serves the rest from node 0; then it exits and
//! node 1 recovers. memwatch must report each crossing (low, min) at most once
//! with the amount that fell back to node 0 (no flapping while it sits at
//! low), a recovery, machine-wide reclaim once per sample (not per node)
//! and `null`, never 4294967295, for "no node". `serve --textfile` must
//! export both nodes.
//!
//! Needs the same inputs as `guests.rs` plus gcc for the test program:
//!     eval "$(scripts/qemu-kernel.sh)"
//!     export NUMASLEUTH_STATIC_BIN="$(scripts/build-static.sh)"
//!     cargo test -p numasleuth-testbed --test it memwatch_guest::
//! With NUMASLEUTH_MEMWATCH_TEXT=1 the guest also prints memwatch's text
//! output, for the docs.

use std::path::Path;

use numasleuth_testbed::check::{run_checked, Checks};
use numasleuth_testbed::{env, guests, program};
use serde_json::Value;

/// memwatch in the background, the pressure in the foreground: node 1 has
/// 512 MiB, so 640 MiB preferring it must spill onto node 0. memwatch is
/// stopped (SIGTERM: a script's background job has SIGINT ignored) once it
/// has printed node 1's recovery, or 30 s after the pressure ended, not
/// after a fixed time: on a starved host (three guests at once on two CPUs)
/// the recovery came after a 14 s window had closed.
const SCENARIO: &str = "numasleuth memwatch --interval 200ms --duration 120s FORMAT > /tmp/mw.out 2>/tmp/mw.err &
mw=$!
usleep 1000000
/pressure 640 1 1000 >&2
wait-until 150 200000 \"grep -q recovered /tmp/mw.out\" || true
usleep 1000000
kill -TERM $mw
wait $mw
rc=$?
cat /tmp/mw.out
cat /tmp/mw.err >&2
exit $rc
";

fn check_memwatch(c: &mut Checks, text: &str) {
    let lines: Vec<Value> = text
        .lines()
        .filter(|l| !l.trim().is_empty())
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    let samples: Vec<&Value> = lines.iter().filter(|l| l["type"] == "sample").collect();
    c.check(samples.len() >= 20, || format!("only {} samples", samples.len()));
    for s in &samples {
        c.eq("schema", s["schema"].as_str(), Some("numasleuth.memwatch/2"));
        c.check(s["machine"]["kswapd_scan_per_sec"].is_number(), || {
            format!("no machine-wide reclaim: {s}")
        });
        // This kernel (6.1) has no per-node reclaim counters: no node row
        // may carry the machine-wide figure.
        for n in s["nodes"].as_array().into_iter().flatten() {
            c.check(n["kswapd_scan_per_sec"].is_null(), || {
                format!("node row with reclaim: {n}")
            });
        }
    }
    let events: Vec<&Value> = samples
        .iter()
        .flat_map(|s| s["events"].as_array().into_iter().flatten())
        .collect();
    for e in &events {
        c.check(e["node"].is_null() || e["node"].as_u64().is_some_and(|n| n < 2), || {
            format!("event with a fake node: {e}")
        });
    }
    let of = |kind: &str, node: u64| -> Vec<&&Value> {
        events
            .iter()
            .filter(|e| e["kind"] == kind && e["node"] == node)
            .collect()
    };
    // Node 1 drops to its low and then its min watermark, sometimes within
    // one sample: each crossing is reported once (no flapping). The
    // kernel spills only once the node is under low, so the crossing's
    // sample may see no fallback yet; the crossings or the recovery must
    // say how much fell back to node 0.
    let (low, min, recovered) = (of("below-low", 1), of("below-min", 1), of("recovered", 1));
    c.check(
        low.len() <= 1 && min.len() <= 1 && !(low.is_empty() && min.is_empty()),
        || format!("node 1 below-low {low:?}, below-min {min:?}"),
    );
    c.check(
        low.iter().chain(&min).chain(&recovered).any(|e| {
            let message = e["message"].as_str().unwrap_or("");
            message.contains("of its allocations fell back to node 0") && message.contains(" pages, ")
        }),
        || format!("no fallback amount in {low:?} {min:?} {recovered:?}"),
    );
    c.eq("node 1 recoveries", recovered.len(), 1);
    let fallback: f64 = samples
        .iter()
        .filter_map(|s| s["nodes"].as_array()?.iter().find(|n| n["node"] == 0))
        .filter_map(|n| n["numa_miss_per_sec"].as_f64())
        .sum();
    c.check(fallback > 0.0, || "node 0 never took node 1's allocations".to_string());
}

fn check_serve(c: &mut Checks, text: &str) {
    for node in ["0", "1"] {
        for metric in [
            "numasleuth_node_memory_free_bytes",
            "numasleuth_node_numa_miss_total",
            "numasleuth_node_numa_foreign_total",
        ] {
            let series = format!("{metric}{{node=\"{node}\"}} ");
            c.check(text.lines().any(|l| l.starts_with(&series)), || {
                format!("no {series} in serve's textfile")
            });
        }
    }
    // numa_foreign of node 1 counts what the pressure spilled to node 0.
    let foreign: f64 = text
        .lines()
        .find_map(|l| l.strip_prefix("numasleuth_node_numa_foreign_total{node=\"1\"} "))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(0.0);
    c.check(foreign > 0.0, || "node 1 numa_foreign is 0 after the spill".to_string());
}

#[test]
fn qemu_two_nodes_memwatch_events_and_serve_under_pressure() {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("memwatch-guest");
    std::fs::create_dir_all(&dir).unwrap();
    let pressure = program::build_static("qemu guest two-nodes-memwatch", "pressure.c", dir.join("pressure"), &[]);
    let json = dir.join("scenario-json.sh");
    std::fs::write(&json, SCENARIO.replace("FORMAT", "--json")).unwrap();
    let text = dir.join("scenario-text.sh");
    std::fs::write(&text, SCENARIO.replace("FORMAT", "")).unwrap();
    let mut spec = guests::two_nodes();
    spec.name = "two-nodes-memwatch".into();
    spec.extra_files = vec![
        ("pressure".into(), pressure),
        ("scenario-json.sh".into(), json),
        ("scenario-text.sh".into(), text),
    ];
    // AutoNUMA would move pages by itself while memwatch watches.
    spec.setup =
        vec!["if [ -w /proc/sys/kernel/numa_balancing ]; then echo 0 > /proc/sys/kernel/numa_balancing; fi".into()];
    spec.commands.extend([
        ("memwatch".into(), "sh /scenario-json.sh".into()),
        (
            "serve".into(),
            "sh -c 'numasleuth serve --once --textfile /tmp && cat /tmp/numasleuth.prom'".into(),
        ),
    ]);
    if std::env::var("NUMASLEUTH_MEMWATCH_TEXT").is_ok_and(|v| v == "1") {
        spec.commands
            .push(("memwatch.text".into(), "sh /scenario-text.sh".into()));
    }
    let host = env::require(&format!("qemu guest {}", spec.name));
    let workdir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("testbed").join(&spec.name);
    run_checked(&host, &spec, &workdir, None, |o, c| {
        let sections = &o.run.transcript.sections;
        match sections.get("memwatch") {
            Some(s) if s.rc == 0 => check_memwatch(c, &s.text),
            Some(s) => c.fail(format!(
                "memwatch scenario exited {}: {}",
                s.rc,
                sections.get("memwatch.stderr").map_or("", |e| e.text.as_str())
            )),
            None => c.fail("memwatch scenario printed no result"),
        }
        match sections.get("serve") {
            Some(s) if s.rc == 0 => check_serve(c, &s.text),
            _ => c.fail("serve --textfile failed in the guest"),
        }
        if let Some(text) = sections.get("memwatch.text") {
            env::report(&format!("[testbed] memwatch text:\n{}", text.text));
        }
    });
}
