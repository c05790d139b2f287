//! QEMU guest `two-nodes-detective`: inspect and move on real process
//! states, on a two-node 6.1 kernel with AutoNUMA left on.
//!
//! - A process started on node 1 and re-pinned to node 0 with `taskset -a
//!   -p` while asleep still shows its old CPU in `stat`: `inspect` must
//!   place it on node 0 by its allowed CPUs, raise `static-data-remote`
//!   and say why.
//! - A process whose globals sit between NUMA-balancing hinting faults
//!   (move_pages: "not present"; pagemap: present): `inspect` must say so
//!   and still count them on node 1, `move --apply` must move every one
//!   and verify it, `inspect` must then be clean, and `undo` must move
//!   them back.
//!
//! Needs the same inputs as `guests.rs` (or NUMASLEUTH_SKIP_QEMU=1 to skip
//! visibly), plus gcc for the static victim (the test fails without it):
//!     eval "$(scripts/qemu-kernel.sh)"
//!     export NUMASLEUTH_STATIC_BIN="$(scripts/build-static.sh)"
//!     cargo test -p numasleuth-testbed --test it detective_guest::

use std::collections::BTreeMap;
use std::path::Path;

use numasleuth_testbed::check::{command_json, run_checked, Checks, Outcome};
use numasleuth_testbed::doc::{self, array, finding, victim_bss};
use numasleuth_testbed::{env, guests, program};
use serde_json::Value;

fn section<'a>(o: &'a Outcome, name: &str) -> &'a str {
    o.run.transcript.sections.get(name).map_or("", |s| s.text.trim())
}

/// The sleeper: placed on node 0 by its allowed CPUs, with the incident.
fn expect_sleeper(o: &Outcome, c: &mut Checks) {
    c.eq(
        "test bed: sleeper's stat still says CPU 2",
        section(o, "sleeper-cpu"),
        "2",
    );
    let pid = section(o, "sleeper-pid");
    let Some(doc) = command_json(c, &o.run.transcript.sections, "inspect-sleeper") else {
        return;
    };
    c.eq(
        "inspect sleeper: thread_nodes",
        doc["thread_nodes"].clone(),
        serde_json::json!([0]),
    );
    let thread = &doc["threads"][0];
    c.eq("inspect sleeper: thread cpu", thread["cpu"].as_u64(), Some(2));
    c.eq("inspect sleeper: thread node", thread["node"].as_u64(), Some(0));
    c.eq(
        "inspect sleeper: placed_by",
        thread["placed_by"].as_str(),
        Some("allowed-cpus"),
    );
    let want = format!("thread {pid} last ran on CPU 2 but may now run only on 0-1 (node 0)");
    match finding(&doc, "static-data-remote") {
        Some(f) => {
            let evidence: Vec<&str> = array(f, "evidence").iter().filter_map(|e| e["text"].as_str()).collect();
            c.check(evidence.contains(&want.as_str()), || {
                format!("inspect sleeper: no evidence line {want:?} in {evidence:?}")
            });
        }
        None => c.fail(format!("inspect sleeper: no static-data-remote: {}", doc["findings"])),
    }
}

/// The spinner: pages between hinting faults seen, moved, verified, undone.
fn expect_hinting(o: &Outcome, c: &mut Checks) {
    let sections = &o.run.transcript.sections;
    let mut hidden_before = 0;
    let mut nodes_before = BTreeMap::new();
    if let Some(doc) = command_json(c, sections, "inspect-hinting") {
        let (nodes, hinting) = victim_bss(&doc, "counted_pages_by_node");
        hidden_before = hinting;
        c.check(hinting > 0, || {
            format!("inspect: no .bss page between hinting faults: {}", doc["notes"])
        });
        // The worker may first-touch a page of the C library's .bss on
        // node 0; the main thread put nearly all of it on node 1.
        c.check(nodes.get("1") > nodes.get("0"), || {
            format!("inspect: .bss not mostly on node 1: {nodes:?}")
        });
        nodes_before = nodes;
        c.check(finding(&doc, "static-data-remote").is_some(), || {
            format!("inspect: no static-data-remote with hidden pages: {}", doc["findings"])
        });
        c.eq("inspect: per_page_static", doc["per_page_static"].as_bool(), Some(true));
    }
    let mut resident = 0;
    if let Some(dry) = command_json(c, sections, "move-dry-hinting") {
        let hinting = dry["hinting_faults"].as_u64().unwrap_or(0);
        resident = hinting + dry["pages_to_move"].as_u64().unwrap_or(0) + dry["already_there"].as_u64().unwrap_or(0);
        c.check(hinting >= hidden_before && hinting > 0, || {
            format!("move dry run: hinting_faults {hinting}, inspect saw {hidden_before}: {dry}")
        });
        c.eq("move dry run applied", dry["applied"].clone(), Value::Null);
    }
    if let Some(moved) = command_json(c, sections, "move-apply-hinting") {
        let applied = &moved["applied"];
        c.eq(
            "move --apply: hinting_faults left",
            moved["hinting_faults"].as_u64(),
            Some(0),
        );
        c.check(applied["attempted"].as_u64() >= Some(resident) && resident > 0, || {
            format!("move --apply attempted fewer than the {resident} resident pages: {applied}")
        });
        doc::expect_move_verified(c, applied);
        let notes: Vec<&str> = array(&moved, "notes").iter().filter_map(Value::as_str).collect();
        c.check(
            notes.iter().any(|n| n.contains("were read once (process_vm_readv)")),
            || format!("move --apply: no note on reading the hidden pages: {notes:?}"),
        );
    }
    if let Some(after) = command_json(c, sections, "inspect-hinting-moved") {
        let (nodes, _) = victim_bss(&after, "counted_pages_by_node");
        c.check(finding(&after, "static-data-remote").is_none(), || {
            format!("static-data-remote still raised after the move: {}", after["findings"])
        });
        c.check(
            nodes.get("0").is_some_and(|&p| p > 0) && !nodes.contains_key("1"),
            || format!("spinner .bss after the move: {nodes:?}"),
        );
    }
    match sections.get("wait-scan-again") {
        Some(s) if s.rc == 0 => {}
        other => c.fail(format!(
            "test bed: no two more NUMA-balancing scan passes within 90 s: {:?}",
            other.map(|s| (s.rc, &s.text))
        )),
    }
    if let Some(again) = command_json(c, sections, "inspect-hinting-again") {
        let (nodes, hinting) = victim_bss(&again, "counted_pages_by_node");
        c.check(
            hinting > 0 && nodes.get("0").is_some_and(|&p| p > 0) && !nodes.contains_key("1"),
            || format!("inspect after two more scan passes: {hinting} hidden pages, {nodes:?}"),
        );
    }
    match sections.get("undo-hinting") {
        Some(s) if s.rc == 0 && s.text.contains("moved back") => {
            c.check(
                s.text
                    .contains("were between NUMA-balancing hinting faults and were read once"),
                || format!("undo did not read the hidden pages back into view: {:?}", s.text),
            );
        }
        other => c.fail(format!("undo: {:?}", other.map(|s| (s.rc, &s.text)))),
    }
    if let Some(undone) = command_json(c, sections, "inspect-hinting-undone") {
        let (nodes, _) = victim_bss(&undone, "counted_pages_by_node");
        c.eq("spinner .bss after undo = before the move", nodes, nodes_before);
    }
}

#[test]
fn qemu_two_nodes_detective_repinned_sleeper_and_hinting_faults() {
    let victim = program::build_static(
        "qemu guest two-nodes-detective",
        "victim.c",
        Path::new(env!("CARGO_TARGET_TMPDIR")).join("victim-static-detective"),
        &["-pthread", "-fno-toplevel-reorder"],
    );
    let spec = guests::two_nodes_detective(&victim);
    let host = env::require(&format!("qemu guest {}", spec.name));
    let workdir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("testbed").join(&spec.name);
    run_checked(&host, &spec, &workdir, None, |o, c| {
        // The premise: AutoNUMA is on, as on any multi-node machine.
        c.eq("test bed: kernel.numa_balancing", section(o, "numa-balancing"), "1");
        expect_sleeper(o, c);
        expect_hinting(o, c);
    });
}
