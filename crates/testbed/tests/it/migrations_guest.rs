//! QEMU guest `two-nodes-migrations`: thread moves across a real two-node
//! kernel. `tests/victim/hopper.c`'s main thread is flipped between CPU 0
//! (node 0) and CPU 2 (node 1) 20 times from outside with `taskset`, while
//! its second thread stays pinned to CPU 1. Through the
//! `sched:sched_migrate_task` tracepoint (the guest mounts tracefs; the
//! tool never does), `migrations` must count at least 20 node moves for the
//! flipped thread and none for the pinned one. A second hopper moves
//! itself every 20 ms, and `doctor --pid` must rank `thread-hopping-nodes`
//! first, naming the hot line that follows the thread, and blame no page.
//!
//! Needs the same inputs as `guests.rs` (leave them out with
//! `cargo test -- --skip qemu_`, to skip visibly), plus gcc:
//!     eval "$(scripts/qemu-kernel.sh)"
//!     export NUMASLEUTH_STATIC_BIN="$(scripts/build-static.sh)"
//!     cargo test -p numasleuth-testbed --test it migrations_guest::
//! With NUMASLEUTH_MIGRATIONS_TEXT=1 the guest also prints the text report,
//! for the README.

use std::path::Path;

use numasleuth_testbed::check::{command_json, run_checked, Checks};
use numasleuth_testbed::doc::finding_ids;
use numasleuth_testbed::env::Kernel;
use numasleuth_testbed::{env, guests, program};
use serde_json::Value;

const PID: &str = "$(cat /tmp/hopper.pid)";
const SELF_HOPPER: &str = "$(cat /tmp/selfhop.pid)";

/// Flips the hopper `n` times between CPU 0 and CPU 2, 100 ms apart
/// (it starts on CPU 2, so every flip changes node).
fn flips(n: u32) -> String {
    format!(
        "i=0; while [ $i -lt {half} ]; do taskset -p 1 {PID} >/dev/null; usleep 100000; \
         taskset -p 4 {PID} >/dev/null; usleep 100000; i=$((i+1)); done",
        half = n / 2
    )
}

fn thread(doc: &Value, tid: u64) -> Option<&Value> {
    doc["threads"].as_array()?.iter().find(|t| t["tid"] == tid)
}

fn check_migrations(c: &mut Checks, doc: &Value, pid: u64, pinned: u64) {
    c.eq("schema", doc["schema"].as_str(), Some("numasleuth.migrations/2"));
    c.eq("method", doc["method"]["kind"].as_str(), Some("tracepoint"));
    match thread(doc, pid) {
        Some(t) => {
            c.check(t["node_migrations"].as_u64().is_some_and(|n| n >= 20), || {
                format!("flipped thread: fewer than 20 node moves: {t}")
            });
            c.eq(
                "flipped thread's nodes",
                t["nodes_visited"].clone(),
                serde_json::json!([0, 1]),
            );
        }
        None => c.fail(format!("flipped thread {pid} not listed: {doc}")),
    }
    match thread(doc, pinned) {
        Some(t) => {
            c.eq("pinned thread's CPU moves", t["cpu_migrations"].as_u64(), Some(0));
            c.eq("pinned thread's node moves", t["node_migrations"].as_u64(), Some(0));
        }
        None => c.fail(format!("pinned thread {pinned} not listed: {doc}")),
    }
}

/// The self-hopper's moves are named first, and no page is blamed for a
/// line that only follows the thread.
fn check_doctor(c: &mut Checks, doc: &Value) {
    let ids = finding_ids(doc);
    c.eq(
        "doctor --pid: first finding",
        ids.first().copied(),
        Some("thread-hopping-nodes"),
    );
    c.check(!ids.iter().any(|id| id.starts_with("hot-remote-")), || {
        format!("doctor --pid blamed a page for a moving thread: {}", doc["findings"])
    });
}

fn ids(text: &str) -> Option<(u64, u64)> {
    let line = text.lines().find(|l| l.starts_with("hopper pid="))?;
    let field = |key: &str| -> Option<u64> {
        line.split_whitespace()
            .find_map(|w| w.strip_prefix(key))
            .and_then(|v| v.parse().ok())
    };
    Some((field("pid=")?, field("pinned_tid=")?))
}

#[test]
fn qemu_two_nodes_migrations_counts_node_hops_and_doctor_flags_them() {
    run(Kernel::Debian6_1);
}

/// The same on 6.12, whose `sched_migrate_task` format differs from 6.1's.
#[test]
fn qemu_two_nodes_migrations_counts_node_hops_and_doctor_flags_them_6_12() {
    run(Kernel::Debian6_12);
}

fn run(kernel: Kernel) {
    let hopper = program::build_static(
        "qemu guest two-nodes-migrations",
        "hopper.c",
        Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("hopper-static-{}", kernel.version())),
        &["-pthread"],
    );
    let mut spec = guests::two_nodes();
    spec.name = "two-nodes-migrations".into();
    let mut spec = guests::on_kernel(spec, kernel);
    spec.extra_files = vec![("hopper".into(), hopper)];
    spec.setup = [
        "mount -t tracefs nodev /sys/kernel/tracing",
        // AutoNUMA's own task moves would add to the count.
        "if [ -w /proc/sys/kernel/numa_balancing ]; then echo 0 > /proc/sys/kernel/numa_balancing; fi",
        "/hopper > /tmp/hopper.out 2>&1 &",
        "record-pid hopper",
        "taskset -p 4 $(cat /tmp/hopper.pid) > /dev/null",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let sh = |name: &str, cmd: String| (name.to_string(), format!("sh -c '{cmd}'"));
    spec.commands.extend([
        sh("hopper", "cat /tmp/hopper.out".into()),
        sh(
            "format",
            "cat /sys/kernel/tracing/events/sched/sched_migrate_task/format".into(),
        ),
        // 20 flips take 2 s unloaded; on a starved host each `taskset`
        // under TCG takes far longer (19 of 20 were seen in a 6 s window,
        // and again in a 10 s one with three guests on two CPUs). So the
        // recording ends when the flips have: `taskset` returns once the
        // thread has moved, and SIGTERM stops migrations, which reports
        // what it counted (SIGINT: ignored in a script's background job).
        // The flips begin a second after migrations holds its tracepoint's
        // perf events (opened disabled, then enabled together): a fixed
        // second from its start was too short for a slower build, which
        // saw 16 of 20.
        sh(
            "migrations",
            format!(
                "numasleuth migrations {PID} --method tracepoint --duration 120s --json & m=$!; \
                 wait-until 300 100000 \"ls -l /proc/$m/fd 2>/dev/null | grep -q perf_event\" || true; \
                 sleep 1; {}; usleep 500000; kill -TERM $m; wait $m",
                flips(20)
            ),
        ),
        // doctor watches for one second. The outside flips' rate falls
        // with the host's load (once too few moves in its second), so a
        // second hopper moves itself every 20 ms, spinning in between: its
        // stack line is then hot from both nodes, which must read as a
        // thread that moves, not as a page on the wrong node. It starts on
        // CPU 0 so that every page is first touched on node 0: started on
        // node 1, its pinned thread's stack page (first touched by the
        // parent) was rightly reported remote from that thread on CPU 1.
        sh(
            "doctor",
            format!(
                "kill {PID}; taskset -c 0 /hopper --self-hop-ms 20 > /tmp/selfhop.out 2>&1 & \
                 record-pid selfhop && numasleuth doctor --pid {SELF_HOPPER} --json"
            ),
        ),
    ]);
    if std::env::var("NUMASLEUTH_MIGRATIONS_TEXT").is_ok_and(|v| v == "1") {
        spec.commands.push(sh(
            "migrations.text",
            format!("({}) & numasleuth migrations {PID} --duration 3s", flips(20)),
        ));
    }
    let host = env::require(&format!("qemu guest {}", spec.name));
    let workdir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("testbed").join(&spec.name);
    run_checked(&host, &spec, &workdir, None, |o, c| {
        let sections = &o.run.transcript.sections;
        let Some((pid, pinned)) = sections.get("hopper").and_then(|s| ids(&s.text)) else {
            c.fail(format!(
                "hopper printed no ids: {:?}",
                sections.get("hopper").map(|s| &s.text)
            ));
            return;
        };
        if let Some(doc) = command_json(c, sections, "migrations") {
            check_migrations(c, &doc, pid, pinned);
        }
        if let Some(doc) = command_json(c, sections, "doctor") {
            check_doctor(c, &doc);
        }
        if let Some(format) = sections.get("format") {
            env::report(&format!(
                "[testbed] sched_migrate_task format in the guest:\n{}",
                format.text
            ));
        }
        if let Some(text) = sections.get("migrations.text") {
            env::report(&format!("[testbed] migrations text report:\n{}", text.text));
        }
    });
}
