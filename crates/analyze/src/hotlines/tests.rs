use super::*;

fn touch(tid: u32, node: u32, address: u64, access: AccessKind) -> Touch {
    Touch {
        tid,
        cpu: Some(tid),
        node: Some(node),
        address,
        access,
    }
}

#[test]
fn a_line_written_by_two_threads_ranks_above_a_busier_private_line() {
    let mut t = Tally::default();
    for _ in 0..100 {
        t.sample_with(&[touch(1, 0, 0x1008, AccessKind::Read)]); // private, busy
    }
    for tid in [2, 3] {
        for _ in 0..10 {
            t.sample_with(&[touch(tid, 0, 0x2000, AccessKind::ReadModifyWrite)]);
        }
    }
    t.sample_without_memory();
    t.sample_unknown("code bytes unreadable");
    let lines = rank(&t, 10);
    assert_eq!(lines[0].address, 0x2000);
    assert!(lines[0].contended);
    assert_eq!(lines[0].writer_threads, vec![2, 3]);
    assert_eq!(
        (lines[0].reads, lines[0].writes, lines[0].read_modify_writes),
        (20, 20, 20)
    );
    assert_eq!(lines[1].address, 0x1000, "line-aligned");
    assert!(!lines[1].contended);
    assert_eq!(t.samples, 122);
    assert!((t.unknown_share() - 1.0 / 122.0).abs() < 1e-12);
}

#[test]
fn padded_counters_each_written_by_one_thread_are_not_contended() {
    let mut t = Tally::default();
    for tid in 0..4u32 {
        for _ in 0..50 {
            t.sample_with(&[touch(tid, 0, 0x10_000 + u64::from(tid) * 128, AccessKind::Write)]);
        }
    }
    assert!(rank(&t, 10).iter().all(|l| !l.contended));
}

#[test]
fn readers_on_two_nodes_make_a_line_contended() {
    let mut t = Tally::default();
    t.sample_with(&[touch(1, 0, 0x40, AccessKind::Read)]);
    t.sample_with(&[touch(1, 1, 0x40, AccessKind::Read)]);
    let l = &rank(&t, 1)[0];
    assert!(l.contended);
    assert_eq!(l.reasons, vec!["touched from 2 nodes".to_string()]);
}

#[test]
fn false_sharing_names_the_symbols() {
    let mut t = Tally::default();
    t.sample_with(&[touch(1, 0, 0x1000, AccessKind::Write)]);
    t.sample_with(&[touch(2, 0, 0x1008, AccessKind::Read)]);
    let line = &t.lines[&0x1000];
    let symbols = vec![("nil_root".to_string(), 0..8), ("log_level".to_string(), 8..12)];
    let (uses, shared) = false_sharing(line, &symbols);
    assert!(shared);
    assert_eq!(uses[0].name, "nil_root");
    assert_eq!((uses[0].writes, uses[0].threads.clone()), (1, vec![1]));
    assert_eq!((uses[1].reads, uses[1].threads.clone()), (1, vec![2]));
    let (_, one_symbol) = false_sharing(line, &symbols[..1]);
    assert!(!one_symbol);
}

#[test]
fn threads_writing_their_own_elements_of_one_array_are_false_sharing() {
    let mut t = Tally::default();
    for _ in 0..3 {
        t.sample_with(&[touch(1, 0, 0x2000, AccessKind::ReadModifyWrite)]);
        t.sample_with(&[touch(2, 0, 0x2008, AccessKind::ReadModifyWrite)]);
    }
    let line = &t.lines[&0x2000];
    let counters = vec![("counters".to_string(), 0..64)];
    let (uses, shared) = false_sharing(line, &counters);
    assert!(shared, "{uses:?}");
    assert_eq!(uses[0].threads, vec![1, 2]);
    // One counter both threads increment is true sharing, not false.
    let mut t = Tally::default();
    t.sample_with(&[touch(1, 0, 0x2000, AccessKind::ReadModifyWrite)]);
    t.sample_with(&[touch(2, 0, 0x2000, AccessKind::ReadModifyWrite)]);
    let (_, shared) = false_sharing(&t.lines[&0x2000], &counters);
    assert!(!shared);
}

#[test]
fn caps_bound_memory() {
    let mut t = Tally::default();
    for tid in 0..(MAX_THREADS_PER_LINE as u32 + 10) {
        t.sample_with(&[touch(tid, 0, 0x80, AccessKind::Write)]);
    }
    let line = &t.lines[&0x80];
    assert_eq!(line.threads.len(), MAX_THREADS_PER_LINE);
    assert_eq!(line.untracked, 10);
    assert_eq!(line.samples, MAX_THREADS_PER_LINE as u64 + 10);
}
