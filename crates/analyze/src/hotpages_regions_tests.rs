use proptest::prelude::*;

use super::*;

const PAGE: u64 = 0x1000;

/// Sorted, disjoint, non-empty, page-aligned and within `max`.
fn assert_valid(regions: &[(u64, u64)], max: usize) {
    assert!(regions.len() <= max.max(1), "{} regions for {max}", regions.len());
    for &(s, e) in regions {
        assert!(s < e, "empty region {s:#x}-{e:#x}");
        assert!(s % PAGE == 0 && e % PAGE == 0, "unaligned {s:#x}-{e:#x}");
    }
    assert!(regions.windows(2).all(|w| w[0].1 <= w[1].0), "{regions:x?}");
}

#[test]
fn regions_follow_the_mappings_and_stay_bounded() {
    // A static program's text, its data+bss, the heap, two thread stacks
    // with guard pages, the stack, and [vsyscall] (left out).
    let maps = [
        (0x40_0000, 0x4b_0000),
        (0x4c_5000, 0x4c_d000),
        (0x4c_d000, 0x4f_0000),
        (0x7f00_0000_0000, 0x7f00_0080_0000),
        (0x7f00_0080_1000, 0x7f00_0100_1000),
        (0x7ffc_0000_0000, 0x7ffc_0002_1000),
        (0xffff_ffff_ff60_0000, 0xffff_ffff_ff60_1000),
    ];
    // No sections known, and a budget too small to split pages: one region
    // per mapping, touching ones (data+bss and the heap) kept apart.
    let all = initial_regions(&maps, &[], 6, PAGE);
    assert_eq!(
        all,
        vec![
            (0x40_0000, 0x4b_0000),
            (0x4c_5000, 0x4c_d000),
            (0x4c_d000, 0x4f_0000),
            (0x7f00_0000_0000, 0x7f00_0080_0000),
            (0x7f00_0080_1000, 0x7f00_0100_1000),
            (0x7ffc_0000_0000, 0x7ffc_0002_1000),
        ]
    );
    // At most 3: the smallest gaps (touching, the guard page, then
    // text-data) are joined first.
    let three = initial_regions(&maps, &[], 3, PAGE);
    assert_eq!(
        three,
        vec![
            (0x40_0000, 0x4f_0000),
            (0x7f00_0000_0000, 0x7f00_0100_1000),
            (0x7ffc_0000_0000, 0x7ffc_0002_1000),
        ]
    );
    assert_eq!(initial_regions(&maps, &[], 1, PAGE).len(), 1);
    assert!(initial_regions(&[], &[], 10, PAGE).is_empty());
    // Disjoint and sorted, whatever the input order.
    let mut shuffled = maps.to_vec();
    shuffled.reverse();
    assert_eq!(initial_regions(&shuffled, &[], 6, PAGE), all);
}

#[test]
fn small_mappings_start_as_one_region_per_page_within_the_budget() {
    // 180 pages of text, 8 of data+bss, 2 of vDSO, a 2048-page stack.
    let maps = [
        (0x40_0000, 0x4b_4000),
        (0x4c_5000, 0x4c_d000),
        (0x7fff_f7fc_0000, 0x7fff_f7fc_2000),
        (0x7fff_0000_0000, 0x7fff_0080_0000),
    ];
    let regions = initial_regions(&maps, &[], 500, PAGE);
    // data+bss and the vDSO page by page; text and stack whole.
    assert_eq!(regions.len(), 1 + 8 + 1 + 2);
    assert!(regions.contains(&(0x4c_7000, 0x4c_8000)));
    assert!(regions.contains(&(0x40_0000, 0x4b_4000)));
    // A budget of 6: the vDSO (2 pages) fits, data+bss (8) does not.
    let tight = initial_regions(&maps, &[], 6, PAGE);
    assert_eq!(tight.len(), 5);
    assert!(tight.contains(&(0x4c_5000, 0x4c_d000)));
    assert_valid(&tight, 6);
}

/// The database incident's shape, as a static non-PIE program maps it:
/// text, read-only data, the file-backed part of the RW segment, the
/// anonymous rest of `.bss`, and the heap right after it. 69 pages of
/// writable sections; the hot global sits in `.bss` at 0x4e0040.
const INCIDENT_MAPS: [(u64, u64); 7] = [
    (0x40_0000, 0x40_1000),
    (0x40_1000, 0x4b_4000),
    (0x4b_4000, 0x4c_4000),
    (0x4c_4000, 0x4c_8000),
    (0x4c_8000, 0x50_9000),
    (0x50_9000, 0x52_a000),
    (0x7ffd_0000_0000, 0x7ffd_0002_1000),
];
const INCIDENT_SECTIONS: [(u64, u64); 5] = [
    // .tdata, .data.rel.ro, .got, .got.plt, .data, .bss (the last two
    // share a page).
    (0x4c_47b0, 0x4c_47d0),
    (0x4c_47d0, 0x4c_6ee8),
    (0x4c_6ee8, 0x4c_7000),
    (0x4c_7000, 0x4c_8b60),
    (0x4c_8b60, 0x50_8f00),
];

#[test]
fn the_incident_programs_static_pages_start_as_regions_of_their_own() {
    let regions = initial_regions(&INCIDENT_MAPS, &INCIDENT_SECTIONS, 500, PAGE);
    assert_valid(&regions, 500);
    // Every page of the writable sections, 0x4c4000-0x509000 (69 pages),
    // is a region of its own: the global's page among them.
    let static_pages: Vec<(u64, u64)> = (0x4c4u64..0x509).map(|p| (p * PAGE, (p + 1) * PAGE)).collect();
    assert_eq!(static_pages.len(), 69);
    for page in &static_pages {
        assert!(regions.contains(page), "{page:x?} not a region: {regions:x?}");
    }
    // With a budget too small for every mapping's pages, the sections
    // still get theirs first.
    let tight = initial_regions(&INCIDENT_MAPS, &INCIDENT_SECTIONS, 100, PAGE);
    assert_valid(&tight, 100);
    for page in &static_pages {
        assert!(tight.contains(page), "{page:x?} not a region at 100: {tight:x?}");
    }
    // From the mappings alone the anonymous .bss (65 pages) starts as one
    // region, the global's page a sliver of it: what 3 s did not resolve.
    let bare = initial_regions(&INCIDENT_MAPS, &[], 500, PAGE);
    assert!(bare.contains(&(0x4c_8000, 0x50_9000)), "{bare:x?}");
}

#[test]
fn a_section_too_large_for_the_budget_is_split_evenly() {
    // A 40 MiB .bss (10,240 pages) in a budget of 500: the sections get
    // what the mappings leave, in regions of whole, near-equal pages.
    let maps = [(0x40_0000, 0x50_0000), (0x60_0000, 0x60_0000 + 10_240 * PAGE)];
    let bss = [(0x60_0000 + 0x10, 0x60_0000 + 10_240 * PAGE - 0x100)];
    let regions = initial_regions(&maps, &bss, 500, PAGE);
    assert_valid(&regions, 500);
    let inside: Vec<&(u64, u64)> = regions.iter().filter(|r| r.0 >= 0x60_0000).collect();
    assert_eq!(inside.len(), 499);
    let sizes: Vec<u64> = inside.iter().map(|r| (r.1 - r.0) / PAGE).collect();
    let (lo, hi) = (sizes.iter().min().unwrap(), sizes.iter().max().unwrap());
    assert!(hi - lo <= 1, "{lo}..{hi}");
}

#[test]
fn a_page_two_sections_share_is_cut_on_both_sides() {
    // .data ends and .bss starts inside page 0x2000; a budget of 3 leaves
    // no page splits, only the cuts.
    let maps = [(0x1000, 0x9000)];
    let sections = [(0x1000, 0x2800), (0x2800, 0x9000)];
    assert_eq!(
        initial_regions(&maps, &sections, 3, PAGE),
        vec![(0x1000, 0x2000), (0x2000, 0x3000), (0x3000, 0x9000)]
    );
    // More cuts than the budget holds: none, and the static pages are
    // split evenly instead.
    assert_eq!(
        initial_regions(&maps, &sections, 2, PAGE),
        vec![(0x1000, 0x5000), (0x5000, 0x9000)]
    );
    // Sections outside every mapping, or in kernel space, change nothing.
    let far = [(0x10_0000, 0x10_2000), (u64::MAX - 0x2000, u64::MAX)];
    assert_eq!(
        initial_regions(&maps, &far, 3, PAGE),
        initial_regions(&maps, &[], 3, PAGE)
    );
}

fn ranges(max_len: usize) -> impl Strategy<Value = Vec<(u64, u64)>> {
    prop::collection::vec((0u64..1 << 20, 1u64..1 << 16), 0..max_len).prop_map(|v| {
        v.into_iter()
            .map(|(s, len)| (s * 0x100, s * 0x100 + len * 0x10))
            .collect()
    })
}

proptest! {
    #[test]
    fn regions_are_always_sorted_disjoint_aligned_bounded_and_cover_the_mappings(
        maps in ranges(80),
        sections in ranges(80),
        max in 1usize..600,
    ) {
        let regions = initial_regions(&maps, &sections, max, PAGE);
        assert_valid(&regions, max);
        // Every mapped page is in a region.
        for &(s, e) in &maps {
            for page in [s / PAGE, (e - 1) / PAGE] {
                let a = page * PAGE;
                prop_assert!(regions.iter().any(|r| r.0 <= a && a < r.1), "{a:#x} uncovered");
            }
        }
        prop_assert_eq!(regions.is_empty(), maps.is_empty());
    }
}
