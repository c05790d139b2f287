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
            .any(|e| e.text == "thread 114 last ran on CPU 2 but may now run only on 0-1 (node 0)"),
        "{:?}",
        f.evidence
    );
    assert!(f.evidence[0]
        .text
        .starts_with("1 thread(s) run on node 0: 1 of them by the CPUs they may use"));
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

/// The page holding the end of .data and the start of .bss is one page:
/// on node 1 while the two .bss pages after it are local, the object has
/// 1 remote page against 2 local ones, which is no incident. Counted once
/// per section it would be 2 against 2, and raised.
#[test]
fn a_page_two_sections_share_is_counted_once() {
    let spans = [
        span(".data", SectionClass::Data, 0x555555558000, 0x555555558100),
        span(".bss", SectionClass::Bss, 0x555555558100, 0x55555555b000),
    ];
    let stream = [
        (
            "555555558000-555555559000 rw-p 00003000 fe:00 12 /opt/victim",
            "555555558000 default file=/opt/victim anon=1 dirty=1 N1=1 kernelpagesize_kB=4",
        ),
        (
            "555555559000-55555555b000 rw-p 00000000 00:00 0",
            "555555559000 default anon=2 dirty=2 N0=2 kernelpagesize_kB=4",
        ),
    ];
    let mut builder = built(&spans, &stream);
    for range in builder.pages_to_query() {
        let node = if range.start == 0x555555558000 { 1 } else { 0 };
        let pages = ((range.end - range.start) / 4096) as usize;
        builder.set_page_nodes(range.start, vec![Residency::Node(node); pages]);
    }
    let threads = vec![thread(4242, 0)];
    let model = builder.finish(
        &threads[0].stat,
        Some(EXE.into()),
        &threads,
        &topology(&[&[0, 1], &[2, 3]]),
        Vec::new(),
    );
    let data = model
        .mappings
        .iter()
        .find(|m| m.section.as_deref() == Some(".data"))
        .unwrap();
    assert_eq!(data.pages_by_node.get(&1), Some(&1), "listed under .data");
    assert!(data.counted_pages_by_node.is_empty(), "counted under .bss");
    assert_eq!(data.shared_pages(), 1);
    let listed: u64 = model.mappings.iter().map(|m| m.resident_pages()).sum();
    let counted: u64 = model
        .mappings
        .iter()
        .map(|m| m.counted_pages_by_node.values().sum::<u64>())
        .sum();
    assert_eq!((listed, counted), (4, 3));
    assert!(static_data_remote(&model).is_none(), "1 remote page against 2 local");
}

/// When the shared page is off node with the rest, the finding's lines say
/// which page is listed twice.
#[test]
fn the_evidence_says_a_listed_page_is_shared() {
    let model = victim(1, &[0], Answers::All, &[]);
    let f = static_data_remote(&model).unwrap();
    assert!(
        f.evidence.iter().any(|e| e.text.starts_with(
            "/opt/victim .data: node 1: 1 page, 1 page shared with a neighbouring section and counted there"
        )),
        "{:?}",
        f.evidence
    );
}

/// Pages between NUMA-balancing hinting faults (pagemap: present,
/// move_pages: not present) are resident: numa_maps' leftover count puts
/// them on node 1, exactly, so the split stays per page, and the finding
/// says its remedy can move them.
#[test]
fn pages_between_hinting_faults_are_placed_by_numa_maps() {
    let model = victim(1, &[0], Answers::HintTail, &[]);
    assert!(model.per_page_static, "{:?}", model.notes);
    assert!(
        model.notes.iter().any(|n| n.starts_with(
            "3 resident page(s) in 0x555555559000-0x55555555c000 are between NUMA-balancing hinting faults"
        ) && n.contains("numa_maps puts them on node 1")),
        "{:?}",
        model.notes
    );
    let tail_bss = model
        .mappings
        .iter()
        .find(|m| m.section.as_deref() == Some(".bss") && m.start == 0x555555559000)
        .unwrap();
    assert_eq!(tail_bss.accuracy, Accuracy::PerPage);
    assert_eq!(
        (tail_bss.pages_by_node.get(&1), tail_bss.hinting_fault_pages),
        (Some(&2), 2)
    );
    let f = static_data_remote(&model).unwrap();
    assert!(
        f.evidence.iter().any(|e| e
            .text
            .contains("2 of these pages are between NUMA-balancing hinting faults")),
        "{:?}",
        f.evidence
    );
}
