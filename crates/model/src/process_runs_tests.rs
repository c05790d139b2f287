//! Folding runs gives the model that folding each mapping gives.

use proptest::prelude::*;

use super::super::ProcessBuilder;
use crate::symbol::{SectionClass, SectionSpan};
use numasleuth_parse::procfs::process::Vma;
use numasleuth_parse::procfs::task::parse_stat;
use numasleuth_parse::procfs::{maps, numa_maps};

/// One mapping: its path (`None`: anonymous), whether it has numa_maps, its
/// policy, per-node counts, huge pages, and the ELF object and sections the
/// caller found at its address.
type Drawn = (
    Option<usize>,
    Option<usize>,
    Vec<(u32, u64)>,
    bool,
    Option<usize>,
    Option<usize>,
);

const PATHS: [&str; 4] = ["/usr/lib/libc.so.6", "/usr/lib/libm.so.6", "[heap]", "[stack]"];
const POLICIES: [&str; 4] = ["default", "bind:0", "interleave:0-1", "prefer:1"];
const OBJECTS: [&str; 2] = ["/usr/bin/app", "/usr/lib/libc.so.6"];
const CLASSES: [SectionClass; 3] = [SectionClass::Text, SectionClass::Data, SectionClass::Bss];

fn drawn() -> impl Strategy<Value = Drawn> {
    // Nodes 0-3 with counts from none to past any product with a page size.
    let count = prop_oneof![Just(0u64), 1u64..5, Just(u64::MAX / 3)];
    (
        prop::option::of(0..PATHS.len()),
        prop::option::weighted(0.9, 0..POLICIES.len()),
        prop::collection::vec((0u32..4, count), 0..4),
        prop::bool::weighted(0.1),
        prop::option::of(0..OBJECTS.len()),
        prop::option::weighted(0.2, 0..CLASSES.len()),
    )
}

/// The mapping at the `index`th 4 KiB page, as maps and numa_maps say it;
/// its sections, if any, span it.
fn vma(index: u64, d: &Drawn) -> (Vma, Option<&'static str>, Vec<SectionSpan>) {
    let (path, policy, counts, huge, object, class) = d;
    let start = 0x1000_0000 + index * 0x1000;
    let path = path.map_or("", |p| PATHS[p]);
    let line = format!(
        "{start:x}-{:x} rw-p 00000000 00:00 {} {path}",
        start + 0x1000,
        u64::from(!path.is_empty() && !path.starts_with('['))
    );
    let mapping = maps::parse_line(&line).expect("a well-formed maps line");
    let numa = policy.map(|p| {
        let mut words = format!("{start:x} {}", POLICIES[p]);
        if *huge {
            words.push_str(" huge kernelpagesize_kB=2048");
        }
        let mut nodes = counts.clone();
        nodes.sort_unstable_by_key(|(node, _)| *node);
        for (node, pages) in nodes {
            words.push_str(&format!(" N{node}={pages}"));
        }
        numa_maps::parse_line(&words).expect("a well-formed numa_maps line")
    });
    let spans = class
        .map(|c| SectionSpan {
            object: OBJECTS[object.unwrap_or(0)].to_string(),
            section: format!("{:?}", CLASSES[c]),
            class: CLASSES[c],
            start,
            end: start + 0x800,
        })
        .into_iter()
        .collect();
    (Vma { mapping, numa }, object.map(|o| OBJECTS[o]), spans)
}

fn model(stream: &[Drawn], one_by_one: bool, limit: usize) -> crate::process::ProcessModel {
    let mut builder = ProcessBuilder::new(4096, limit);
    builder.runs.one_by_one = one_by_one;
    for (index, d) in stream.iter().enumerate() {
        let (vma, object, spans) = vma(index as u64, d);
        let spans: Vec<&SectionSpan> = spans.iter().collect();
        builder.add(&vma, object, &spans);
    }
    let stat = parse_stat(
        "7 (app) S 1 7 7 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 100 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 17 0 0 0 0 0 0\n",
    )
    .expect("a well-formed stat line");
    builder.finish(&stat, None, &[], &crate::Topology::default(), Vec::new())
}

proptest! {
    /// Runs of like mappings (a path or policy repeated, drawn from few)
    /// folded once give the model each mapping folded alone gives: totals
    /// per node, kind, object and policy, the listing and its order.
    #[test]
    fn runs_fold_to_the_same_model(
        stream in prop::collection::vec(drawn(), 0..60),
        repeat in prop::collection::vec(1usize..6, 0..60),
        limit in prop::sample::select(vec![0usize, 3, usize::MAX]),
    ) {
        // Repeat each drawn mapping a few times: runs as a process has them.
        let stream: Vec<Drawn> = stream
            .iter()
            .zip(repeat.iter().chain(std::iter::repeat(&1)))
            .flat_map(|(d, &times)| std::iter::repeat_n(d.clone(), times))
            .collect();
        let runs = model(&stream, false, limit);
        let one_by_one = model(&stream, true, limit);
        prop_assert_eq!(&runs, &one_by_one);
        prop_assert_eq!(runs.mappings_total, stream.len() as u64);
    }
}

#[test]
fn a_line_naming_many_nodes_is_folded_without_a_long_search() {
    // More nodes than a run holds: folded at once, every node still counted.
    let counts: Vec<(u32, u64)> = (0..40).map(|node| (node, 1)).collect();
    let stream = vec![(None, Some(0), counts.clone(), false, None, None); 3];
    let runs = model(&stream, false, 10);
    assert_eq!(runs, model(&stream, true, 10));
    assert_eq!(runs.bytes_by_node.len(), 40);
    assert!(runs.bytes_by_node.values().all(|&bytes| bytes == 3 * 4096));
    assert_eq!(runs.policies[0].mappings, 3);
}
