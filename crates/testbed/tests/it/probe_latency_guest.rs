//! QEMU guest `two-nodes-probe`: `probe-latency` on a real two-node
//! kernel. alloc-touch binds to node 1 (placement verified by the probe
//! with move_pages before it times anything), a node that does not exist
//! is refused, and while `tests/victim/hog.c` fills node 1 past its low
//! watermark (preferring node 1, so the rest falls back to node 0) the
//! probe's memory-signal sampler must see node 1 under its low watermark
//! and the fallback on node 0 (numa_miss).
//!
//! Under TCG latencies mean nothing, so no latency is asserted; the
//! schedule's bookkeeping and the signals are. Needs the same inputs as
//! `guests.rs` (or `cargo test -- --skip qemu_` to leave it out visibly):
//!     eval "$(scripts/qemu-kernel.sh)"
//!     export NUMASLEUTH_STATIC_BIN="$(scripts/build-static.sh)"
//!     cargo test -p numasleuth-testbed --test it probe_latency_guest::
//! With NUMASLEUTH_PROBE_TEXT=1 the guest also prints the text report, for
//! the README.

use std::path::Path;

use numasleuth_testbed::check::{command_json, run_checked, Checks};
use numasleuth_testbed::{env, guests, program};
use serde_json::Value;

/// A fill takes most of node 1 (512 MiB) before the pressure probe; during
/// the probe's 6 s a second hog asks node 1 for more than it has left, so
/// node 1 sinks to its low watermark and the rest falls back to node 0
/// while the probe samples. (Under TCG the first fill takes seconds; the
/// second is short enough to happen inside the probe even on a slower
/// host.)
const FILL: &str = "/hog 1 440 0 > /tmp/fill.out &";
const WAIT_FILL: &str = "wait-until 1200 100000 \"grep -q done /tmp/fill.out\" || true";
const PRESSURE: &str = "numasleuth probe-latency --node 0 --rate 100/s --duration 6s";
const HOG: &str = "/hog 1 120 0 > /tmp/hog.out";

fn messages(doc: &Value) -> Vec<String> {
    doc["signals"]["event_list"].as_array().map_or(Vec::new(), |a| {
        a.iter()
            .filter_map(|e| e["message"].as_str().map(str::to_string))
            .collect()
    })
}

fn check_pressure(c: &mut Checks, doc: &Value) {
    c.eq("schema", doc["schema"].as_str(), Some("numasleuth.probe_latency/1"));
    let samples = doc["samples"].as_u64().unwrap_or(0);
    let not_issued = doc["not_issued"].as_u64().unwrap_or(0);
    c.eq("every scheduled operation accounted for", samples + not_issued, 600);
    c.check(samples > 0, || "no operation completed".into());
    c.check(doc["signals"]["samples"].as_u64().unwrap_or(0) >= 5, || {
        format!("memory signals: {}", doc["signals"])
    });
    let events = messages(doc);
    c.check(
        events
            .iter()
            .any(|m| m.starts_with("node 1 below low") || m.starts_with("node 1 below min")),
        || format!("node 1 never seen under its low watermark: {events:?}"),
    );
    c.check(
        events
            .iter()
            .any(|m| m.starts_with("node 0:") && m.contains("numa_miss")),
        || format!("no fallback to node 0 seen: {events:?}"),
    );
    for p in ["50", "99", "99.9", "max"] {
        let (corrected, uncorrected) = (&doc["percentiles_ns"][p], &doc["uncorrected_percentiles_ns"][p]);
        c.check(corrected.as_u64() >= uncorrected.as_u64(), || {
            format!("p{p}: corrected {corrected} < uncorrected {uncorrected}")
        });
    }
}

#[test]
fn qemu_two_nodes_probe_latency_binds_node_1_and_sees_node_pressure() {
    let hog = program::build_static(
        "qemu guest two-nodes-probe",
        "hog.c",
        Path::new(env!("CARGO_TARGET_TMPDIR")).join("hog-static"),
        &[],
    );
    let mut spec = guests::two_nodes();
    spec.name = "two-nodes-probe".into();
    spec.extra_files = vec![("hog".into(), hog)];
    // The node-1 probe binds its pages to node 1 (MPOL_BIND), so it runs
    // before the fill: once a fill has left node 1 under its min watermark,
    // that bound allocation cannot fall back, and the OOM killer may take
    // the fill hog. A CI run saw exactly that shape: node 1 under min after
    // the fill, then no pressure at all during the probes after it.
    spec.commands.extend([
        (
            "node1".into(),
            "numasleuth probe-latency --node 1 --rate 100/s --duration 500ms --json".into(),
        ),
        (
            "node2".into(),
            "numasleuth probe-latency --node 2 --duration 100ms".into(),
        ),
        ("fill".into(), format!("sh -c '{FILL} {WAIT_FILL}'")),
        (
            "pressure".into(),
            // `sh -c`: init runs each command as `"$@"`, without a shell.
            format!("sh -c '({HOG}) & H=$!; {PRESSURE} --json; rc=$?; kill $H; wait $H; exit $rc'"),
        ),
        ("hog".into(), "cat /tmp/hog.out".into()),
    ]);
    if std::env::var("NUMASLEUTH_PROBE_TEXT").is_ok_and(|v| v == "1") {
        spec.commands.push((
            "pressure.text".into(),
            format!("sh -c '({HOG}) & H=$!; {PRESSURE}; rc=$?; kill $H; wait $H; exit $rc'"),
        ));
    }
    let host = env::require(&format!("qemu guest {}", spec.name));
    let workdir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("testbed").join(&spec.name);
    run_checked(&host, &spec, &workdir, None, |o, c| {
        let sections = &o.run.transcript.sections;
        if let Some(doc) = command_json(c, sections, "node1") {
            c.check(
                doc["op"].as_str().is_some_and(|op| op.contains("bound to node 1")),
                || format!("op: {}", doc["op"]),
            );
            let issued = doc["samples"].as_u64().unwrap_or(0);
            c.eq(
                "node 1 operations accounted for",
                issued + doc["not_issued"].as_u64().unwrap_or(0),
                50,
            );
            c.check(issued > 0, || "no operation on node 1 completed".into());
        }
        match sections.get("node2") {
            Some(s) => c.eq("--node 2 on a two-node machine: exit code", s.rc, 2),
            None => c.fail("--node 2 printed no result"),
        }
        let stderr = sections.get("node2.stderr").map_or("", |s| s.text.as_str());
        c.check(
            stderr.contains("node 2 does not exist on this machine (nodes: 0, 1)"),
            || format!("--node 2 stderr: {stderr:?}"),
        );
        if let Some(doc) = command_json(c, sections, "pressure") {
            check_pressure(c, &doc);
        }
        let hog = sections.get("hog").map_or("", |s| s.text.as_str());
        c.check(hog.contains("hog done 120"), || {
            format!("the second hog did not finish within the probe: {hog:?}")
        });
        if let Some(text) = sections.get("pressure.text") {
            env::report(&format!("[testbed] probe-latency text report:\n{}", text.text));
        }
    });
}
