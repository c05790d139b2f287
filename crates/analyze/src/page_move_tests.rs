use numasleuth_model::{Node, NumaSource};
use numasleuth_parse::IdList;

use super::*;

const PAGE: u64 = 4096;

#[test]
fn pages_cover_ranges_once() {
    // .data ends and .bss starts inside one page: that page once.
    let pages = pages_of(&[0x4010..0x4100, 0x4100..0x6001, 0x9000..0x9000], PAGE);
    assert_eq!(pages, vec![0x4000, 0x5000, 0x6000]);
    assert!(pages_of(&[], PAGE).is_empty());
    let top = u64::MAX - 10..u64::MAX;
    assert_eq!(pages_of(std::slice::from_ref(&top), PAGE).len(), 1);
}

#[test]
fn ranges_are_clipped_to_mappings_and_counted_without_listing() {
    let everything = std::slice::from_ref(&(0..u64::MAX));
    let mapping = 0x7f00_0000_0000..0x7f00_0000_3000;
    assert_eq!(clip(everything, &mapping).collect::<Vec<_>>(), vec![mapping.clone()]);
    let ranges = [0x1000..0x7f00_0000_1800, 0x7f00_0000_2000..0x7f00_0000_2001];
    assert_eq!(
        clip(&ranges, &mapping).collect::<Vec<_>>(),
        vec![0x7f00_0000_0000..0x7f00_0000_1800, 0x7f00_0000_2000..0x7f00_0000_2001]
    );
    assert_eq!(clip(&ranges, &(0..0x1000)).count(), 0);
    assert_eq!(page_count(&(0..u64::MAX), PAGE), (u64::MAX - 1) / PAGE + 1);
    assert_eq!(page_count(&(0x4010..0x4100), PAGE), 1);
    assert_eq!(page_count(&(0x4fff..0x5001), PAGE), 2);
    assert_eq!(page_count(&(0x5000..0x5000), PAGE), 0);
    for range in [0x4010..0x4100, 0x4fff..0x6001, u64::MAX - 10..u64::MAX] {
        assert_eq!(
            page_count(&range, PAGE),
            pages_of(std::slice::from_ref(&range), PAGE).len() as u64
        );
    }
}

#[test]
fn plan_moves_only_what_is_elsewhere_and_resident() {
    let pages = [0x4000, 0x5000, 0x6000, 0x7000, 0x9000, 0xa000];
    let states = [
        Residency::Node(1),
        Residency::Node(1),
        Residency::Node(0),
        Residency::NotYetTouched,
        Residency::Node(1),
        Residency::Unknown(16),
    ];
    let p = plan(&pages, &states, 0, PAGE);
    assert_eq!(p.pages_total, 6);
    assert_eq!(p.by_node, BTreeMap::from([(0, 1), (1, 3)]));
    assert_eq!((p.already_there, p.not_present, p.query_failed), (1, 1, 1));
    assert!(p.hinting.is_empty());
    assert_eq!(
        p.to_move,
        vec![
            PageRun {
                start: 0x4000,
                pages: 2,
                node: Some(1),
                state: None,
            },
            PageRun {
                start: 0x9000,
                pages: 1,
                node: Some(1),
                state: None,
            },
        ]
    );
    assert_eq!(p.pages_to_move(), 3);
    assert_eq!(p.addresses(), vec![0x4000, 0x5000, 0x9000]);
}

/// Pages hidden between NUMA-balancing hinting faults are resident: listed
/// apart from the ones move_pages sees, never called "not resident"; the
/// zero page, never-touched pages and holes are each counted as what they
/// are.
#[test]
fn plan_lists_hidden_pages_apart() {
    let pages = [0x4000, 0x5000, 0x6000, 0x7000, 0x8000, 0x9000, 0xa000];
    let states = [
        Residency::HintingFault,
        Residency::HintingFault,
        Residency::Node(1),
        Residency::ZeroPage,
        Residency::Unmapped,
        Residency::SwappedOut,
        Residency::HintingFault,
    ];
    let p = plan(&pages, &states, 0, PAGE);
    assert_eq!(p.pages_hinting(), 3);
    assert_eq!(p.hinting_addresses(), vec![0x4000, 0x5000, 0xa000]);
    assert_eq!(
        p.hinting[0],
        PageRun {
            start: 0x4000,
            pages: 2,
            node: None,
            state: Some(Residency::HintingFault),
        }
    );
    assert_eq!(p.pages_to_move(), 1);
    assert_eq!((p.zero_page, p.unmapped, p.swapped_out, p.not_present), (1, 1, 1, 0));
}

#[test]
fn check_after_the_move() {
    let pages = [0x4000, 0x5000, 0x9000];
    let statuses = [PageStatus::Node(0), PageStatus::Node(1), PageStatus::NotPresent];
    let c = check(&pages, &statuses, 0, PAGE);
    assert_eq!(c.on_target, 1);
    assert_eq!(c.elsewhere.len(), 2);
    assert_eq!(c.elsewhere[0].node, Some(1));
    assert_eq!(c.elsewhere[1].node, None);
}

fn node(id: u32, cpus: &[u32], memory: Option<u64>, has_memory: Option<bool>) -> Node {
    Node {
        id,
        cpus: IdList::new(cpus.to_vec()),
        memory_total_bytes: memory,
        memory_free_bytes: None,
        hugetlb_bytes: None,
        distances: Vec::new(),
        has_memory,
        access: Vec::new(),
    }
}

#[test]
fn target_nodes() {
    let topology = Topology {
        numa: NumaSource::Sysfs,
        nodes: vec![
            node(0, &[0, 1], Some(1 << 30), Some(true)),
            node(1, &[2, 3], Some(0), Some(false)),
            node(2, &[], Some(1 << 30), Some(true)),
        ],
        cpus: Vec::new(),
        ..Topology::default()
    };
    let ok = target_node(&topology, 0).unwrap();
    assert!(ok.has_cpus && ok.note.is_none());
    let cpuless = target_node(&topology, 2).unwrap();
    assert!(cpuless.note.unwrap().contains("node 2 has no CPUs"));
    let err = target_node(&topology, 1).unwrap_err().to_string();
    assert!(err.contains("node 1 has no memory"), "{err}");
    let err = target_node(&topology, 7).unwrap_err().to_string();
    assert_eq!(err, "--to-node 7: node 7 does not exist (nodes: 0-2)");
}

#[test]
fn numa_maps_check_counts_only_the_target_node() {
    let vma = |pages_by_node: Vec<(u32, u64)>| VmaPages {
        span: 0x1000..0x9000,
        pages_by_node,
    };
    let before = [vma(vec![(0, 6), (1, 2)]), vma(vec![(1, 1)])];
    let after = [vma(vec![(0, 1), (1, 7)]), vma(vec![(1, 1)])];
    assert_eq!(
        numa_maps_check(&before, &after, 1, 5),
        NumaMapsCheck {
            gained: 5,
            agrees: true
        }
    );
    assert_eq!(
        numa_maps_check(&before, &after, 1, 6),
        NumaMapsCheck {
            gained: 5,
            agrees: false
        }
    );
    assert_eq!(numa_maps_check(&before, &after, 0, 0).gained, -5);
}

#[test]
fn asked_bytes_sum_the_ranges_and_never_overflow() {
    assert_eq!(asked_bytes(&[0x1000..0x3000, 0x8000..0x9000]), 0x3000);
    // A backwards range, as a hostile caller could build it.
    let (high, low) = (0x3000u64, 0x1000u64);
    assert_eq!(asked_bytes(&[high..low, low..low]), 0);
    assert_eq!(asked_bytes(&[]), 0);
    assert_eq!(asked_bytes(&[0..u64::MAX, 0..u64::MAX]), u64::MAX);
}

/// Pages left behind are grouped by what they are, a run breaking where
/// the state changes or an address is skipped; a run on a node names it
/// and carries no state.
#[test]
fn state_runs_group_consecutive_pages_of_one_state() {
    let runs = super::state_runs(
        &[
            (0x4000, Residency::NotYetTouched),
            (0x5000, Residency::NotYetTouched),
            (0x7000, Residency::NotYetTouched),
            (0x8000, Residency::Node(1)),
            (0x9000, Residency::Node(1)),
        ],
        PAGE,
    );
    let run = |start, pages, node, state| PageRun {
        start,
        pages,
        node,
        state,
    };
    assert_eq!(
        runs,
        vec![
            run(0x4000, 2, None, Some(Residency::NotYetTouched)),
            run(0x7000, 1, None, Some(Residency::NotYetTouched)),
            run(0x8000, 2, Some(1), None),
        ]
    );
    // The last page of the address space has no successor to run into.
    let top = u64::MAX - PAGE + 1;
    let wrapped = super::state_runs(&[(top, Residency::Unmapped), (0, Residency::Unmapped)], PAGE);
    assert_eq!(wrapped.len(), 2);
}

/// A mapping in a document: hex bounds, pages keyed by node as strings.
#[test]
fn a_mapping_serializes_with_hex_bounds_and_string_keys() {
    let vma = super::VmaPages {
        span: 0x1000..0x3000,
        pages_by_node: vec![(2, 5), (10, 1)],
    };
    assert_eq!(
        serde_json::to_string(&vma).unwrap(),
        r#"{"start":"0x1000","end":"0x3000","pages_by_node":{"10":1,"2":5}}"#
    );
}
