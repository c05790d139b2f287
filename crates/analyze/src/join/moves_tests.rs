//! A thread that hops between nodes while it writes its own stack line:
//! the line is "remote" half the time whatever node its page is on.

use std::collections::BTreeMap;

use numasleuth_parse::pages::Residency;

use super::*;
use crate::hotlines::{rank, AccessKind, Tally, Touch};
use crate::migrations::{self, summarize, Method, NumaBalancing, ThreadPath};

const STACK_LINE: u64 = 0x7ffd_0000_1f40;

fn write(tid: u32, node: u32) -> Touch {
    Touch {
        tid,
        cpu: Some(node * 2),
        node: Some(node),
        address: STACK_LINE,
        access: AccessKind::Write,
    }
}

/// Thread 170 writes its line 60 times from node 1 and 40 from node 0
/// (it hops); with `other`, thread 171 also writes it 80 times from node 1
/// only.
fn lines(other: bool) -> (Vec<NamedLine>, u64) {
    let mut t = Tally::default();
    for (node, n) in [(1, 60), (0, 40)] {
        for _ in 0..n {
            t.sample_with(&[write(170, node)]);
        }
    }
    for _ in 0..if other { 80 } else { 0 } {
        t.sample_with(&[write(171, 1)]);
    }
    let named = rank(&t, 4)
        .into_iter()
        .map(|line| NamedLine {
            symbols: Vec::new(),
            region: "stack of 170".into(),
            symbol_use: Vec::new(),
            false_sharing: false,
            line,
        })
        .collect();
    (named, t.accesses())
}

/// What `migrations` says of thread 170 changing node `moves` times in 1 s.
fn moves(moves: usize) -> Vec<Finding> {
    let path: Vec<(u32, u32)> = (0..moves).map(|i| if i % 2 == 0 { (0, 2) } else { (2, 0) }).collect();
    let thread = ThreadPath {
        tid: 170,
        comm: "hopper".into(),
        moves: moves as u64,
        path,
    };
    let node_of: BTreeMap<u32, u32> = [(0, 0), (2, 1)].into_iter().collect();
    let summary = summarize(&[thread], &node_of, 1.0);
    migrations::findings(170, &summary, &NumaBalancing::default(), &Method::Tracepoint, 1.0)
}

fn judged(lines: &[NamedLine], accesses: u64, moves: &mut [Finding]) -> Vec<Finding> {
    let pages = [LinePage {
        line_address: STACK_LINE & !63,
        residency: Residency::Node(0),
    }];
    let clues = Clues {
        pid: 170,
        model: None,
        lines,
        pages: &pages,
        accesses,
        duration_s: 1.0,
    };
    let mut causes = hot_remote(&clues);
    defer_to_moves(&mut causes, moves, &clues);
    causes
}

#[test]
fn a_line_that_follows_a_hopping_thread_is_the_hop_not_the_page() {
    let (lines, accesses) = lines(false);
    let mut hops = moves(20);
    assert_eq!(hops[0].id, migrations::THREAD_HOPPING_NODES);
    let causes = judged(&lines, accesses, &mut hops);
    assert!(causes.is_empty(), "the page is not blamed: {causes:#?}");
    let cited = hops[0].evidence.iter().find(|e| e.values.int("line_address").is_some());
    let text = cited.map_or("", |e| e.text.as_str());
    assert!(
        text.contains("thread(s) 170 touched the hot line at 0x7ffd00001f40 (stack of 170) from nodes 0-1"),
        "{text}"
    );
    assert!(text.contains("its page is on node 0"), "{text}");
}

#[test]
fn without_a_rate_of_moves_the_line_stays_a_hot_remote_line() {
    // Two moves in the window are no rate: migrations raises nothing, and
    // the sample alone does not overrule the page's node.
    let (lines, accesses) = lines(false);
    let mut hops = moves(2);
    assert!(hops.is_empty(), "{hops:#?}");
    let causes = judged(&lines, accesses, &mut hops);
    assert_eq!(causes.len(), 1, "{causes:#?}");
    assert_eq!(causes[0].id, HOT_REMOTE_LINE);
}

#[test]
fn a_remote_writer_that_never_moved_keeps_the_page_blamed() {
    // Thread 171 writes only from node 1: moving the page would help it,
    // whatever thread 170 does.
    let (lines, accesses) = lines(true);
    let mut hops = moves(20);
    let causes = judged(&lines, accesses, &mut hops);
    assert_eq!(causes.len(), 1, "{causes:#?}");
    assert_eq!(causes[0].id, HOT_REMOTE_LINE);
    assert!(
        hops[0].evidence.iter().all(|e| e.values.int("line_address").is_none()),
        "{:#?}",
        hops[0].evidence
    );
}
