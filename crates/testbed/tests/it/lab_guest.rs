//! QEMU guest: `numasleuth lab` on a real two-node kernel, the only place
//! our single-node machines can exercise the remote global (mbind to the
//! other node, verified with move_pages) and the spread placement.
//!
//! Under TCG the timings mean nothing; this checks structure, placement
//! and the workloads' own correctness flags, never a rate. Needs the same
//! inputs as `guests.rs` (or `cargo test -- --skip qemu_` to leave them out):
//!     eval "$(scripts/qemu-kernel.sh)"
//!     export NUMASLEUTH_STATIC_BIN="$(scripts/build-static.sh)"
//!     cargo test -p numasleuth-testbed --test it lab_guest::
//! With NUMASLEUTH_LAB_TEXT=1 the guest also prints the text tables, for
//! the benchmark note.

use std::path::Path;

use numasleuth_testbed::check::{command_json, Checks};
use numasleuth_testbed::{env, guest, guests};
use serde_json::Value;

/// Short samples: TCG is slow, and the numbers are not the point.
const TINY: &str = "--json --samples 2 --sample-ms 5";

fn results(doc: &Value) -> &[Value] {
    doc["results"].as_array().map_or(&[], Vec::as_slice)
}

fn cpus(row: &Value) -> Vec<u64> {
    row["cpus"]
        .as_array()
        .map_or(Vec::new(), |a| a.iter().filter_map(Value::as_u64).collect())
}

#[test]
fn qemu_two_nodes_lab_places_the_remote_global_and_spreads_threads() {
    let test = "qemu guest lab-two-nodes";
    let host = env::require(test);
    let mut spec = guests::two_nodes();
    spec.name = "lab-two-nodes".into();
    spec.commands = vec![
        ("fs".into(), format!("numasleuth lab false-sharing --threads 2 {TINY}")),
        (
            "locks".into(),
            format!("numasleuth lab locks --thread-sweep 2,4 {TINY}"),
        ),
        ("rg".into(), format!("numasleuth lab remote-global {TINY}")),
        // -C picks the CPUs across both nodes, in numactl and strided form.
        (
            "fs-c".into(),
            format!("numasleuth lab false-sharing -C 1-3:2 --threads 2 {TINY}"),
        ),
        (
            "mem-c".into(),
            "numasleuth mem latency -C 3 --size 1M --samples 2 --sample-ms 1ms --json".into(),
        ),
        ("bad-node".into(), "numasleuth lab remote-global --remote-node 7".into()),
    ];
    if std::env::var("NUMASLEUTH_LAB_TEXT").is_ok_and(|v| v == "1") {
        for (name, experiment) in [
            ("fs.text", "false-sharing"),
            ("locks.text", "locks"),
            ("rg.text", "remote-global"),
        ] {
            spec.commands.push((
                name.into(),
                format!("numasleuth lab {experiment} --samples 3 --sample-ms 20"),
            ));
        }
    }
    let workdir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("testbed").join(&spec.name);
    let run = guest::run(&host, &spec, &workdir).unwrap_or_else(|e| panic!("{e}"));
    let sections = &run.transcript.sections;
    let mut c = Checks::new(&spec.name);

    if let Some(fs) = command_json(&mut c, sections, "fs") {
        c.eq(
            "fs schema",
            fs["schema"].as_str(),
            Some("numasleuth.lab.false_sharing/1"),
        );
        let mut placements: Vec<&str> = results(&fs).iter().filter_map(|r| r["placement"].as_str()).collect();
        placements.dedup();
        c.eq(
            "fs: both placements by default on two nodes",
            placements,
            vec!["compact", "spread"],
        );
        for row in results(&fs) {
            let want = if row["placement"] == "compact" {
                vec![0, 1]
            } else {
                vec![0, 2]
            };
            c.eq(&format!("fs: CPUs of {} placement", row["placement"]), cpus(row), want);
            c.eq(
                "fs: counters summed right",
                row["counts_verified"].as_bool(),
                Some(true),
            );
        }
        c.eq(
            "fs: counters on node 0, verified",
            fs["placement_verified"].as_bool(),
            Some(true),
        );
    }

    if let Some(locks) = command_json(&mut c, sections, "locks") {
        c.eq(
            "locks: 4 locks × 2 loads × 2 counts × 2 placements",
            results(&locks).len(),
            32,
        );
        for row in results(&locks).iter().filter(|r| r["load"] == "one-load") {
            c.eq(
                &format!("locks: {} counted every pair", row["lock"]),
                row["count_verified"].as_bool(),
                Some(true),
            );
        }
    }

    if let Some(fs) = command_json(&mut c, sections, "fs-c") {
        c.check(!results(&fs).is_empty(), || "fs -C: no rows".into());
        for row in results(&fs) {
            c.eq("fs -C 1-3:2: threads on CPUs 1 and 3", cpus(row), vec![1, 3]);
        }
    }

    if let Some(mem) = command_json(&mut c, sections, "mem-c") {
        let latency = &mem["latency_ns"];
        c.eq(
            "mem -C 3: chased from CPU 3",
            latency["cpus"].clone(),
            serde_json::json!([3]),
        );
        c.eq(
            "mem -C 3: node 1 initiates",
            latency["initiators"].clone(),
            serde_json::json!([1]),
        );
    }

    if let Some(rg) = command_json(&mut c, sections, "rg") {
        c.eq("rg: workers on node 0", rg["node"].as_u64(), Some(0));
        c.eq("rg: remote node chosen", rg["remote_node"].as_u64(), Some(1));
        let remote: Vec<&Value> = results(&rg).iter().filter(|r| r["global"] == "remote").collect();
        c.check(!remote.is_empty(), || "rg: no remote rows".into());
        for row in &remote {
            c.eq("rg: remote global on node 1", row["global_node"].as_u64(), Some(1));
            c.eq(
                "rg: remote placement verified",
                row["placement_verified"].as_bool(),
                Some(true),
            );
            c.check(cpus(row).iter().all(|cpu| *cpu < 2), || {
                format!("rg: workers off node 0: {row}")
            });
        }
        c.check(rg["ns_per_invalidation"].is_number(), || {
            format!(
                "rg: ns_per_invalidation should be measured: {}",
                rg["ns_per_invalidation"]
            )
        });
    }

    match sections.get("bad-node") {
        Some(s) => {
            c.eq("bad remote node exits 2", s.rc, 2);
            let stderr = sections.get("bad-node.stderr").map_or("", |e| e.text.as_str());
            c.check(stderr.contains("node 7 does not exist"), || {
                format!("bad-node stderr: {stderr}")
            });
        }
        None => c.fail("bad-node printed no result"),
    }

    for name in ["fs.text", "locks.text", "rg.text"] {
        if let Some(s) = sections.get(name) {
            env::report(&format!("[testbed] lab-two-nodes {name} (emulated, TCG):\n{}", s.text));
        }
    }
    env::report(&format!(
        "[testbed] lab-two-nodes: boot-to-poweroff {:.1} s, {} failure(s); artefacts in {}",
        run.boot_to_poweroff.as_secs_f64(),
        c.failures.len(),
        workdir.display()
    ));
    c.finish();
}
