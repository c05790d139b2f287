//! The `/sys` value parsers behind one target, chosen by the first byte of
//! the input. CPU and node lists have the `cpulist` target; whole trees are
//! read by `snapshot_archive`.

use numasleuth_kernel::read;
use numasleuth_kernel::sysfs::{cpu, damon, node, pci};

use crate::{select, text, Choice, Harness};

/// Selector byte → parser. Other bytes pick by `byte % len`.
pub const PARSERS: [Choice<Harness>; 7] = [
    (b'z', cache_size),
    (b'd', distance),
    (b'n', counters),
    (b'i', id),
    (b'p', pci_path),
    (b'l', dir_names),
    (b'r', damon_region),
];

pub fn run(data: &[u8]) {
    let Some((parse, rest)) = select(data, &PARSERS) else {
        return;
    };
    parse(rest);
}

fn cache_size(data: &[u8]) {
    let _ = cpu::parse_size(&text(data));
}

fn distance(data: &[u8]) {
    let text = text(data);
    if let Ok(row) = node::parse_distance(&text) {
        assert_eq!(row.len(), text.split_whitespace().count());
    }
}

fn counters(data: &[u8]) {
    let text = text(data);
    if let Ok(counters) = node::parse_counters(&text) {
        assert!(counters.len() <= text.lines().count());
    }
}

fn id(data: &[u8]) {
    let _ = read::parse_id(&text(data));
}

/// A resolved device path: its PCI ancestor is a prefix of it that ends in
/// a PCI address; the class of the first four bytes maps to a known kind.
fn pci_path(data: &[u8]) {
    let text = text(data);
    if let Some(ancestor) = pci::pci_ancestor(&text) {
        assert!(text.starts_with(&ancestor), "`{ancestor}` is not a prefix of `{text}`");
        let last = ancestor.rsplit('/').next().unwrap_or_default();
        assert!(pci::is_pci_address(last), "`{ancestor}` does not end in a PCI address");
    }
    if let Some(word) = data.first_chunk::<4>() {
        if let Some(kind) = pci::kind_of_class(u32::from_le_bytes(*word)) {
            assert!([pci::DeviceKind::Display, pci::DeviceKind::Accelerator].contains(&kind));
        }
    }
}

/// Directory listings: `cpuN` and `nodeN` names to sorted ids.
fn dir_names(data: &[u8]) {
    let names: Vec<String> = text(data).lines().map(str::to_string).collect();
    for ids in [cpu::cpu_ids(&names), node::node_ids(&names)] {
        assert!(ids.windows(2).all(|w| w[0] <= w[1]));
        assert!(ids.len() <= names.len());
    }
}

/// A DAMON region from its four files (one per line here), and the other
/// DAMON values: a region that parses is never empty.
fn damon_region(data: &[u8]) {
    let text = text(data);
    let mut lines = text.lines();
    let mut next = || lines.next().unwrap_or_default();
    if let Ok(region) = damon::parse_region(next(), next(), next(), next()) {
        assert!(region.end > region.start && region.bytes() > 0);
    }
    if let Ok(names) = damon::parse_operations(&text) {
        assert!(names.len() <= 16);
    }
    if let Ok(Some(pid)) = damon::parse_pid(&text) {
        assert!(pid > 0);
    }
    let _ = damon::KdamondState::parse(&text);
}
