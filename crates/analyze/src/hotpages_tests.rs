use numasleuth_model::hotpages::{DamonSnapshot, PagePlacement, RegionName};
use numasleuth_model::process::MemoryKind;
use numasleuth_parse::sysfs::damon::{DamonAttrs, DamonRegion};
use numasleuth_parse::IdList;

use super::*;

const ATTRS: DamonAttrs = DamonAttrs {
    sample_us: 5_000,
    aggr_us: 100_000,
    update_us: 60_000,
    min_regions: 10,
    max_regions: 1000,
};

fn region(start: u64, end: u64, nr_accesses: u64, age: u64) -> DamonRegion {
    DamonRegion {
        start,
        end,
        nr_accesses,
        age,
    }
}

fn snap(at_ms: u64, regions: Vec<DamonRegion>) -> DamonSnapshot {
    DamonSnapshot { at_ms, regions }
}

fn placement(sampled: u64, by_node: &[(u32, u64)]) -> PagePlacement {
    PagePlacement {
        sampled_pages: sampled,
        pages_by_node: by_node.iter().copied().collect(),
        hinting_fault_pages: 0,
        other_pages: sampled - by_node.iter().map(|(_, p)| p).sum::<u64>(),
    }
}

#[test]
fn heat_is_the_overlap_weighted_mean_of_the_second_half() {
    // Four snapshots; the first half (coarse, one big region) is left out.
    let snapshots = vec![
        snap(0, vec![region(0x0, 0x10000, 1, 0)]),
        snap(1000, vec![region(0x0, 0x10000, 2, 1)]),
        // Later: the hot page split out, then split differently.
        snap(
            2000,
            vec![
                region(0x0, 0x4000, 0, 3),
                region(0x4000, 0x5000, 20, 3),
                region(0x5000, 0x10000, 0, 3),
            ],
        ),
        snap(3000, vec![region(0x0, 0x4800, 8, 1), region(0x4800, 0x10000, 0, 9)]),
    ];
    let regions = heat(&snapshots, &ATTRS);
    assert_eq!(regions.len(), 2);
    let first = &regions[0];
    assert_eq!(
        (first.start, first.end, first.nr_accesses, first.age),
        (0x0, 0x4800, 8, 1)
    );
    // Snapshot 3 over 0x0-0x4800: 0x4000 bytes at 0 and 0x800 at 20;
    // snapshot 4: all 0x4800 bytes at 8.
    let want = (0x800 as f64 * 20.0 + 0x4800 as f64 * 8.0) / (0x4800 as f64 * 2.0);
    assert!(
        (first.nr_accesses_mean - want).abs() < 1e-9,
        "{}",
        first.nr_accesses_mean
    );
    assert!((first.access_percent - want / 20.0 * 100.0).abs() < 1e-9);
    assert_eq!(max_nr_accesses(&ATTRS), 20);
    assert!(heat(&[], &ATTRS).is_empty());
    // An empty snapshot at the end is passed over.
    let mut with_empty = snapshots.clone();
    with_empty.push(snap(4000, Vec::new()));
    assert_eq!(heat(&with_empty, &ATTRS), regions);
}

#[test]
fn candidates_are_the_hot_ones_hottest_first() {
    let snapshots = vec![snap(
        0,
        vec![
            region(0x1000, 0x2000, 19, 5),
            region(0x2000, 0x3000, 1, 5),
            region(0x3000, 0x9000, 19, 5),
            region(0x9000, 0xa000, 4, 5),
        ],
    )];
    let regions = heat(&snapshots, &ATTRS);
    // 1 of 20 (5%) is below the floor; equal heat goes to the larger.
    assert_eq!(candidates(&regions, 10), vec![2, 0, 3]);
    assert_eq!(candidates(&regions, 1), vec![2]);
}

#[test]
fn sampled_addresses_cover_small_regions_and_spread_over_large_ones() {
    assert_eq!(
        sample_addresses(0x1000, 0x4000, 0x1000, 8),
        vec![0x1000, 0x2000, 0x3000]
    );
    let spread = sample_addresses(0, 0x1000 * 1000, 0x1000, 4);
    assert_eq!(spread, vec![0, 250 * 0x1000, 500 * 0x1000, 750 * 0x1000]);
    // An unaligned end still covers its last page.
    assert_eq!(sample_addresses(0x1000, 0x2001, 0x1000, 8).len(), 2);
    assert!(sample_addresses(u64::MAX - 0x2000, u64::MAX, 0x1000, 4).len() <= 4);
}

fn placed(start: u64, end: u64, percent_of_20: u64, placement_: PagePlacement, threads: &IdList) -> HotRegion {
    let mut r = heat(&[snap(0, vec![region(start, end, percent_of_20, 3)])], &ATTRS).remove(0);
    place(&mut r, placement_, threads);
    r
}

#[test]
fn the_hot_remote_page_ranks_first_and_is_a_finding() {
    let threads: IdList = [0].into_iter().collect();
    // The incident: one .bss page, always accessed, on node 1.
    let mut hot_remote = placed(0x4c7000, 0x4c8000, 19, placement(1, &[(1, 1)]), &threads);
    hot_remote.name = Some(RegionName {
        kind: Some(MemoryKind::Bss),
        object: Some("/victim".into()),
        section: Some(".bss".into()),
        symbols: vec!["nil_root".into(), "log_level".into()],
        symbols_not_shown: 0,
        stack_of_tid: None,
    });
    // Hotter, but local: a worker's stack.
    let hot_local = placed(0x7f00_0000, 0x7f00_8000, 20, placement(8, &[(0, 8)]), &threads);
    // Remote, but cold.
    let cold_remote = placed(0x10_0000, 0x20_0000, 1, placement(16, &[(1, 16)]), &threads);
    assert_eq!(hot_remote.remote_bytes, Some(0x1000));
    assert!((hot_remote.score - 0.95).abs() < 1e-9);
    assert_eq!(hot_local.remote_bytes, Some(0));
    assert_eq!(hot_local.bytes_by_node.get(&0), Some(&0x8000));

    let ranked = rank(vec![cold_remote, hot_local, hot_remote], 10);
    // By heat × remoteness: the cold remote region (5% × 1) still outranks
    // the hot local one (100% × 0); only hot regions reach the ranking in
    // practice (`candidates`).
    let order: Vec<u64> = ranked.iter().map(|r| r.start).collect();
    assert_eq!(order, vec![0x4c7000, 0x10_0000, 0x7f00_0000]);
    let found = findings(&ranked, &threads, 77);
    assert_eq!(found.len(), 1);
    let f = &found[0];
    assert_eq!(f.id, "hot-remote-memory");
    let text = f.evidence_text();
    assert!(
        text.contains("0x4c7000-0x4c8000 (.bss of /victim: nil_root, log_level) is accessed in 95% of samples")
            && text.contains("lives on node 1, while the process's threads run on node 0"),
        "{text}"
    );
    assert!(
        f.remedy.contains("numasleuth lines -p 77 --symbol nil_root"),
        "{}",
        f.remedy
    );
    assert!(f.remedy.contains("numasleuth watch -p 77 --symbol nil_root"));
    assert!(f
        .remedy
        .contains("numasleuth move -p 77 --range 0x4c7000-0x4c8000 --to-node 0"));
    assert_eq!(f.evidence[0].values.int("remote_bytes"), Some(0x1000));
}

#[test]
fn local_or_cold_or_unplaced_memory_is_no_finding() {
    let threads: IdList = [0].into_iter().collect();
    let local = placed(0x1000, 0x2000, 20, placement(1, &[(0, 1)]), &threads);
    let cold = placed(0x2000, 0x3000, 1, placement(1, &[(1, 1)]), &threads);
    // Half on each node: not mostly remote... exactly half is.
    let half = placed(0x3000, 0x5000, 20, placement(2, &[(0, 1), (1, 1)]), &threads);
    let untouched = placed(0x5000, 0x6000, 20, placement(1, &[]), &threads);
    assert!(findings(&rank(vec![local, cold, untouched.clone()], 10), &threads, 1).is_empty());
    assert!(is_hot_remote(&half));
    assert_eq!(untouched.resident_bytes(), 0);
    assert_eq!(untouched.score, 0.0);
    // Threads on no known node: nothing is remote.
    let nowhere = IdList::default();
    let r = placed(0x1000, 0x2000, 20, placement(1, &[(1, 1)]), &nowhere);
    assert_eq!(r.remote_bytes, None);
    assert!(findings(&[r], &nowhere, 1).is_empty());
}

#[test]
fn read_only_memory_counts_half() {
    let threads: IdList = [0].into_iter().collect();
    let mut text = heat(&[snap(0, vec![region(0x401000, 0x403000, 6, 0)])], &ATTRS).remove(0);
    text.name = Some(RegionName {
        kind: Some(MemoryKind::Text),
        ..RegionName::default()
    });
    place(&mut text, placement(2, &[(1, 2)]), &threads);
    let mut global = heat(&[snap(0, vec![region(0x4bc000, 0x4bd000, 6, 0)])], &ATTRS).remove(0);
    global.name = Some(RegionName {
        kind: Some(MemoryKind::Bss),
        ..RegionName::default()
    });
    place(&mut global, placement(1, &[(1, 1)]), &threads);
    assert!((text.score - 0.15).abs() < 1e-9 && (global.score - 0.3).abs() < 1e-9);
    let ranked = rank(vec![text, global], 10);
    assert_eq!(ranked[0].start, 0x4bc000);
    // Both are still hot remote memory.
    assert_eq!(findings(&ranked, &threads, 1)[0].title.split(' ').next(), Some("2"));
}

#[test]
fn hot_remote_regions_are_handed_on_typed_for_a_join() {
    let threads: IdList = [0].into_iter().collect();
    let mut global = placed(0x4c7000, 0x4c8000, 19, placement(1, &[(1, 1)]), &threads);
    global.name = Some(RegionName {
        kind: Some(MemoryKind::Bss),
        section: Some(".bss".into()),
        symbols: vec!["nil_root".into()],
        ..RegionName::default()
    });
    let local = placed(0x7f00_0000, 0x7f00_8000, 20, placement(8, &[(0, 8)]), &threads);
    let cold_remote = placed(0x10_0000, 0x20_0000, 1, placement(16, &[(1, 16)]), &threads);
    let ranked = rank(vec![local, cold_remote, global], 10);
    let typed = hot_remote_regions(&ranked, &threads);
    assert_eq!(typed.len(), 1, "{typed:?}");
    let r = &typed[0];
    assert_eq!((r.start, r.end, r.nodes.as_slice()), (0x4c7000, 0x4c8000, &[1][..]));
    assert_eq!((r.resident_bytes, r.remote_bytes), (0x1000, 0x1000));
    assert_eq!(r.thread_nodes, vec![0]);
    assert!((r.access_percent - 95.0).abs() < 1e-9);
    // A hot cache line at 0x4c7040 is matched; the next page's is not.
    assert!(r.contains(0x4c7040) && !r.contains(0x4c8000) && !r.contains(0x4c6fff));
    assert_eq!(r.symbols(), ["nil_root"]);
}

#[test]
fn a_window_that_saw_too_few_accesses_says_so() {
    let window = Window {
        pid: 7,
        ran_s: 3.0,
        snapshots: 6,
    };
    // The hottest region in 1 of 20 samples (5%): below the floor.
    let cold = heat(
        &[snap(
            0,
            vec![region(0x1000, 0x2000, 1, 3), region(0x2000, 0x9000, 0, 3)],
        )],
        &ATTRS,
    );
    let f = unseen(&cold, window).expect("a window with nothing hot is said");
    assert_eq!((f.id, f.severity), ("hot-memory-unseen", Severity::Info));
    assert_eq!(f.title, "DAMON saw too few accesses in 3 s to rank process 7's memory");
    let text = f.evidence_text();
    assert!(
        text.contains("none of process 7's 2 regions was accessed in 10% of DAMON's samples over 3.0 s")
            && text.contains("the hottest in 5%"),
        "{text}"
    );
    assert!(f.remedy.contains("hotpages -p 7 --duration 30s"), "{}", f.remedy);
    // No regions at all (no snapshot held any).
    let none = unseen(&[], Window { snapshots: 0, ..window }).unwrap();
    assert!(none.evidence_text().contains("DAMON gave no regions of process 7"));
    // One region at the floor: there is something to rank, no finding.
    let hot = heat(&[snap(0, vec![region(0x1000, 0x2000, 2, 3)])], &ATTRS);
    assert_eq!(unseen(&hot, window), None);
}
