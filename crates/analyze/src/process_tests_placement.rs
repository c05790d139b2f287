//! Where threads are judged to run, and counting pages once: the cases a
//! service meets when it is started, then pinned.

use super::*;

/// A thread that last ran on `cpu` and may now use only `allowed`.
fn pinned(tid: u32, cpu: u32, allowed: &str) -> ThreadReading {
    let mut t = thread(tid, cpu);
    t.allowed_cpus = Some(IdList::parse(allowed).unwrap());
    t
}

/// Started on node 1 (its globals first-touched there), then re-pinned to
/// node 0 with `taskset -a -p -c 0-1` while it slept: `stat` still says
/// CPU 2. The incident is there, and the evidence says why the thread
/// counts as on node 0.
#[test]
fn a_process_repinned_while_asleep_is_judged_where_it_may_run() {
    let model = victim_with(1, &[pinned(114, 2, "0-1")], Answers::All, &[]);
    assert_eq!(model.threads[0].node, Some(0));
    assert_eq!(model.thread_nodes.ids(), [0]);
    assert!(
        model
            .notes
            .iter()
            .any(|n| n.starts_with("thread 114 last ran on CPU 2 but may now run only on 0-1 (node 0)")),
        "{:?}",
        model.notes
    );
    let f = static_data_remote(&model).expect("static-data-remote");
    assert_eq!(
        f.title,
        "writable static data of /opt/victim is on node 1 while all 1 threads run on node 0"
    );
    assert!(
        f.evidence
            .iter()
            .any(|e| e == "thread 114 last ran on CPU 2 but may now run only on 0-1 (node 0)"),
        "{:?}",
        f.evidence
    );
    assert!(f.evidence[0].starts_with("1 thread(s) run on node 0: 1 of them by the CPUs they may use"));
    assert!(f.remedy.contains("--section .bss --to-node 0 --apply"));
}

/// Today's reading without the fix would place it on node 1, next to its
/// data: no finding. The same process still on its start CPU is clean.
#[test]
fn a_process_still_on_its_start_node_is_clean() {
    let model = victim_with(1, &[pinned(114, 2, "2-3")], Answers::All, &[]);
    assert_eq!(model.thread_nodes.ids(), [1]);
    assert!(static_data_remote(&model).is_none());
    assert!(model.notes.iter().all(|n| !n.contains("last ran on")));
}

/// Allowed CPUs on both nodes: no single node is invented, so there is no
/// single home and no finding, and the spread is said.
#[test]
fn allowed_cpus_spanning_nodes_are_not_one_node() {
    let model = victim_with(1, &[pinned(114, 3, "0-2")], Answers::All, &[]);
    assert_eq!(model.threads[0].node, None);
    assert_eq!(model.thread_nodes.ids(), [0, 1]);
    assert!(static_data_remote(&model).is_none());
    assert!(
        model
            .notes
            .iter()
            .any(|n| n.contains("may now run only on 0-2 (nodes 0-1: several, so no single node is assumed)")),
        "{:?}",
        model.notes
    );
}
