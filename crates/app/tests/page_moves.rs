//! `move`, `bisect` and `undo` in the application layer, on this test's
//! own memory (the live system: move_pages works unprivileged on one's
//! own pages) and on a capture, which none of them may change. Nothing
//! here applies a move.

use std::time::Duration;

use numasleuth_app::bisect::{self, BisectError, BisectRequest, SearchStop};
use numasleuth_app::moves::{self, Leftover, MoveRequest};
use numasleuth_app::page_targets::Asked;
use numasleuth_app::undo::{self, UndoRequest};
use numasleuth_kernel::pages::page_size_bytes;
use numasleuth_kernel::test_support::fixture;
use numasleuth_kernel::Root;
use numasleuth_model::stop::Stop;
use numasleuth_model::{Node, Topology};

/// One page of this process's heap, written (so resident), as a range.
fn one_touched_page(buffer: &mut Vec<u8>) -> (u64, u64) {
    let page_bytes = page_size_bytes();
    buffer.resize(3 * page_bytes as usize, 1);
    buffer.iter_mut().for_each(|b| *b = 1);
    let start = (buffer.as_ptr() as u64).div_ceil(page_bytes) * page_bytes;
    (start, start + page_bytes)
}

fn asked(range: (u64, u64)) -> Asked {
    Asked {
        pid: std::process::id(),
        range: Some(range),
        ..Asked::default()
    }
}

fn live_topology() -> Topology {
    let readings = numasleuth_kernel::gather::read_topology(&Root::live()).expect("this machine's topology");
    Topology::build_degraded(&readings).0
}

fn bisect_request(asked: Asked) -> BisectRequest {
    BisectRequest {
        asked,
        metric_cmd: "echo 1".into(),
        lower_is_better: false,
        to_node: None,
        settle: Duration::from_millis(10),
        rounds: 3,
        min_change: 0.05,
        metric_timeout: Duration::from_secs(5),
        apply: false,
        journal: None,
    }
}

#[test]
fn a_dry_run_plans_a_page_of_our_own_and_leaves_nothing_to_raise() {
    let mut buffer = Vec::new();
    let range = one_touched_page(&mut buffer);
    let topology = live_topology();
    let node = topology.memory_nodes().ids()[0];
    let request = MoveRequest {
        asked: asked(range),
        to_node: node,
        apply: false,
        journal: None,
    };
    let doc = moves::run(&Root::live(), &topology, &request).expect("a plan");
    assert_eq!(doc.pid, std::process::id());
    assert_eq!(doc.pages_total, 1, "{doc:?}");
    assert_eq!(doc.page_bytes, page_size_bytes());
    assert_eq!(doc.targets.len(), 1);
    assert_eq!(doc.targets[0].what, "range");
    assert!(doc.applied.is_none() && doc.numa_maps_after.is_none());
    assert!(moves::leftovers(&doc, &request).is_none());
    drop(buffer);
}

#[test]
fn a_node_whose_memory_is_unknown_is_not_somewhere_to_bisect_to() {
    // Node 1's memory was not read: the topology's own answer
    // (`memory_nodes`) leaves it out, so there is one node and nothing to
    // bisect, rather than a search that sends pages where the kernel
    // never said memory is.
    let mut buffer = Vec::new();
    let range = one_touched_page(&mut buffer);
    let node = |id, has_memory| Node {
        id,
        has_memory,
        ..Node::default()
    };
    let topology = Topology {
        nodes: vec![node(0, Some(true)), node(1, None)],
        ..Topology::default()
    };
    let request = bisect_request(asked(range));
    let e = bisect::run(&Root::live(), &topology, &request, &Stop::new())
        .err()
        .expect("one known node is refused");
    assert_eq!(
        e.to_string(),
        "bisection moves pages between nodes, and this machine has 1 node(s) with memory (0): there is no other \
         node to move them to"
    );
}

#[test]
fn a_capture_is_not_a_system_to_change() {
    let root = fixture("qemu-two-nodes");
    let topology = Topology::default();
    let move_request = MoveRequest {
        asked: asked((0x1000, 0x2000)),
        to_node: 0,
        apply: false,
        journal: None,
    };
    let e = moves::run(&root, &topology, &move_request).unwrap_err();
    assert_eq!(
        e.to_string(),
        "move needs the live system: where pages are is asked of the kernel (move_pages), not a snapshot (--root)"
    );
    let e = bisect::run(&root, &topology, &bisect_request(asked((0x1000, 0x2000))), &Stop::new())
        .err()
        .expect("refused");
    assert_eq!(
        e.to_string(),
        "bisect changes the live system; --root names a snapshot, which is not a system to change"
    );
    let e = undo::run(
        &root,
        &UndoRequest {
            journal: "j.json".into(),
        },
    )
    .err()
    .expect("refused");
    assert_eq!(
        e.to_string(),
        "undo changes the live system; --root names a snapshot, which is not a system to change"
    );
}

#[test]
fn how_a_run_ended_reads_as_before() {
    // cli prints these after the report; its tests compare the lines.
    let undo = "the journal j is kept: `numasleuth undo j` moves back every page still away".to_string();
    let cases: [(BisectError, &str); 3] = [
        (
            BisectError::StoppedAllBack {
                halted: SearchStop::Interrupted,
            },
            "interrupted; every page moved is back where it was",
        ),
        (
            BisectError::NotBack {
                still_away: 2,
                undo: undo.clone(),
            },
            "2 page(s) could not be moved back; the journal j is kept: `numasleuth undo j` moves back every page \
             still away",
        ),
        (
            BisectError::ProcessExited {
                pid: 7,
                journal: "j".into(),
            },
            "process 7 exited during the bisection: its pages went with it, so none is left away; the journal j is \
             kept for the record (`numasleuth undo j` checks, and moves back any page still away)",
        ),
    ];
    for (error, line) in cases {
        assert_eq!(error.to_string(), line);
    }
    let left = Leftover::NotVerified {
        attempted: 5,
        verified: 3,
        to_node: 1,
        journal: "j".into(),
    };
    assert_eq!(
        left.to_string(),
        "2 of 5 page(s) are not on node 1 afterwards (listed above); the journal j moves back those that moved"
    );
}
