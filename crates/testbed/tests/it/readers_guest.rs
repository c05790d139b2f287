//! QEMU guest `two-nodes-readers` on Debian's 6.12 kernel, which has the
//! dynamic kprobe PMU this project's own VM lacks: `readers` sees opens
//! through kprobes on `slabinfo_open` & co.
//!
//! - A shell loop runs `cat /proc/slabinfo` every 200 ms, 15 times:
//!   `readers` must name `cat` and its parent `sh`, by kprobe, with a count
//!   within ±1 of the loop's own (short-lived processes are exactly what
//!   the kprobe catches and a sampled view misses).
//! - The same loop under `probe-latency`: the reads are in its JSON, with
//!   times inside the run.
//! - Nothing reading: an empty list and no finding.
//!
//! Needs the same inputs as `guests.rs` (leave it out with
//! `cargo test -- --skip qemu_`, to skip visibly):
//!     eval "$(scripts/qemu-kernel.sh)"
//!     export NUMASLEUTH_STATIC_BIN="$(scripts/build-static.sh)"
//!     cargo test -p numasleuth-testbed --test it readers_guest::
//! With NUMASLEUTH_READERS_TEXT=1 the guest also prints the text reports,
//! for the README.

use std::path::Path;

use numasleuth_testbed::check::{command_json, run_checked, Checks};
use numasleuth_testbed::env::Kernel;
use numasleuth_testbed::{env, guests};
use serde_json::Value;

/// The loop's own count of `cat`s, written when it is done.
pub(crate) const LOOPS: u64 = 15;

/// Runs `numasleuth ARGS` in the background, its stderr in `/tmp/NAME.err`;
/// once that says `started` (the watch is on: registering kprobes takes a
/// while under TCG), `cat /proc/slabinfo` every 200 ms, `LOOPS` times, and
/// the loop's count into `/tmp/NAME.count`; then waits for numasleuth.
pub(crate) fn under_loop(name: &str, args: &str, started: &str) -> String {
    format!(
        "numasleuth {args} 2>/tmp/{name}.err & \
         wait-until 600 100000 \"grep -q \\\"{started}\\\" /tmp/{name}.err\" || exit 9; \
         n=0; while [ $n -lt {LOOPS} ]; do cat /proc/slabinfo >/dev/null; n=$((n+1)); usleep 200000; done; \
         echo $n > /tmp/{name}.count; wait"
    )
}

fn cats(doc: &Value) -> Vec<&Value> {
    doc["readers"]
        .as_array()
        .map_or(Vec::new(), |r| r.iter().filter(|r| r["comm"] == "cat").collect())
}

pub(crate) fn check_loop(c: &mut Checks, doc: &Value, counted: Option<u64>) {
    c.eq("schema", doc["schema"].as_str(), Some("numasleuth.readers/1"));
    c.eq("method", doc["method"]["kind"].as_str(), Some("kprobe"));
    let found = cats(doc);
    c.eq("readers named cat", found.len(), 1);
    let unnamed: Vec<&Value> = doc["readers"]
        .as_array()
        .map_or(Vec::new(), |r| r.iter().filter(|r| r["comm"] == "?").collect());
    c.check(unnamed.is_empty(), || format!("readers without a name: {unnamed:?}"));
    let Some(cat) = found.first() else {
        c.fail(format!("no `cat` reader: {doc}"));
        return;
    };
    c.eq("cat's parent", cat["parents"][0]["comm"].as_str(), Some("sh"));
    c.eq("the loop's own count", counted, Some(LOOPS));
    let opens = cat["opens"].as_u64().unwrap_or(0);
    c.check(opens.abs_diff(LOOPS) <= 1, || {
        format!("cat opened slabinfo {opens} times by kprobe; the loop ran {LOOPS}: {cat}")
    });
    c.eq("one process per open", cat["processes"].as_u64(), Some(opens));
    c.check(
        doc["findings"]
            .as_array()
            .is_some_and(|f| f.iter().any(|f| f["id"] == "lock-taking-reader")),
        || format!("no lock-taking-reader finding: {}", doc["findings"]),
    );
}

fn check_probe(c: &mut Checks, doc: &Value) {
    c.eq(
        "probe schema",
        doc["schema"].as_str(),
        Some("numasleuth.probe_latency/1"),
    );
    let reads = &doc["readers"];
    c.eq(
        "probe readers' method",
        reads["method"]["kind"].as_str(),
        Some("kprobe"),
    );
    let cat_times: Vec<f64> = reads["opens"].as_array().map_or(Vec::new(), |o| {
        o.iter()
            .filter(|o| o["comm"] == "cat" && o["file"] == "slabinfo")
            .filter_map(|o| o["t_s"].as_f64())
            .collect()
    });
    c.check(cat_times.len() as u64 + 1 >= LOOPS, || {
        format!(
            "probe-latency recorded {} of the loop's {LOOPS} reads: {reads}",
            cat_times.len()
        )
    });
    let wall = doc["wall_s"].as_f64().unwrap_or(0.0);
    c.check(cat_times.iter().all(|t| *t >= 0.0 && *t <= wall + 1.0), || {
        format!("read times outside the run of {wall} s: {cat_times:?}")
    });
    c.check(
        doc["spikes"]
            .as_array()
            .is_some_and(|s| s.iter().all(|s| s["readers"].is_array())),
        || format!("spikes without a readers list: {}", doc["spikes"]),
    );
}

/// The incident's cause is named first: the reader taking the lock, or
/// the zone-reclaim setting that makes every allocation reclaim under it,
/// and the other one beside it.
fn check_incident_first(c: &mut Checks, doc: &Value) {
    let ids = numasleuth_testbed::doc::finding_ids(doc);
    const CAUSES: [&str; 2] = ["lock-taking-reader", "zone-reclaim-mode"];
    c.check(ids.first().is_some_and(|id| CAUSES.contains(id)), || {
        format!("doctor --measure did not name the zone-reclaim incident first: {ids:?}")
    });
    c.check(CAUSES.iter().all(|id| ids.contains(id)), || {
        format!("doctor --measure: want both {CAUSES:?} among {ids:?}")
    });
}

fn check_quiet(c: &mut Checks, doc: &Value) {
    c.eq("quiet method", doc["method"]["kind"].as_str(), Some("kprobe"));
    c.eq("quiet readers", doc["readers"].as_array().map(Vec::len), Some(0));
    c.eq("quiet findings", doc["findings"].as_array().map(Vec::len), Some(0));
}

#[test]
fn qemu_two_nodes_readers_finds_the_slabinfo_loop_by_kprobe_6_12() {
    let mut spec = guests::two_nodes();
    spec.name = "two-nodes-readers".into();
    // No L3 in CPUID, as the hotpages guest: `doctor --measure` sizes its
    // matrices' buffers from the last shared cache, and nothing here
    // asserts the matrices.
    spec.cpu = "max,l3-cache=off".into();
    let mut spec = guests::on_kernel(spec, Kernel::Debian6_12);
    // Only for a tracepoint fallback's message; the kprobe needs no tracefs.
    spec.setup = vec!["mount -t tracefs nodev /sys/kernel/tracing".to_string()];
    let sh = |name: &str, cmd: String| (name.to_string(), format!("sh -c '{cmd}'"));
    spec.commands.extend([
        sh("kprobe-pmu", "cat /sys/bus/event_source/devices/kprobe/type".into()),
        sh("quiet", "numasleuth readers --duration 2s --json".into()),
        sh("loop", under_loop("loop", "readers --duration 15s --json", "watching")),
        sh("loop.count", "cat /tmp/loop.count; cat /tmp/loop.err".into()),
        sh(
            "probe",
            under_loop("probe", "probe-latency --duration 12s --rate 100/s --json", "recording"),
        ),
        sh("probe.count", "cat /tmp/probe.count; cat /tmp/probe.err".into()),
        // The zone-reclaim incident as a user who knows nothing asks about
        // it (issue 33): zone reclaim on, a script reading slabinfo every
        // 200 ms, and one `doctor --measure`. Last, as it changes a setting.
        sh(
            "doctor-measure",
            "echo 1 > /proc/sys/vm/zone_reclaim_mode; \
             (while :; do cat /proc/slabinfo >/dev/null; usleep 200000; done) & l=$!; \
             numasleuth doctor --measure --json; rc=$?; kill $l; exit $rc"
                .into(),
        ),
    ]);
    if std::env::var("NUMASLEUTH_READERS_TEXT").is_ok_and(|v| v == "1") {
        spec.commands.push(sh(
            "loop.text",
            under_loop("text", "readers --duration 12s", "watching"),
        ));
    }
    let mut host = env::require(&format!("qemu guest {}", spec.name));
    host.timeout_secs = host.timeout_secs.max(crate::guests::MEASURE_TIMEOUT_SECS);
    let workdir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("testbed").join(&spec.name);
    run_checked(&host, &spec, &workdir, None, |o, c| {
        let sections = &o.run.transcript.sections;
        let counted = sections
            .get("loop.count")
            .and_then(|s| s.text.lines().next().and_then(|l| l.trim().parse().ok()));
        if let Some(doc) = command_json(c, sections, "quiet") {
            check_quiet(c, &doc);
        }
        if let Some(doc) = command_json(c, sections, "loop") {
            check_loop(c, &doc, counted);
        }
        if let Some(doc) = command_json(c, sections, "probe") {
            check_probe(c, &doc);
        }
        if let Some(doc) = command_json(c, sections, "doctor-measure") {
            check_incident_first(c, &doc);
        }
        for name in ["loop.count", "probe.count"] {
            if let Some(section) = sections.get(name) {
                env::report(&format!("[testbed] {name}: {}", section.text.trim()));
            }
        }
        if let Some(pmu) = sections.get("kprobe-pmu") {
            env::report(&format!("[testbed] kprobe PMU type in the guest: {}", pmu.text.trim()));
        }
        if let Some(text) = sections.get("loop.text") {
            env::report(&format!("[testbed] readers text report:\n{}", text.text));
        }
    });
}
