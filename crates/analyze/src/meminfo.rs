//! `numastat -m`'s view: each node's meminfo side by side, with a total.
//!
//! The kernel's per-node meminfo (`nodeN/meminfo`) is read by the one
//! meminfo reader (`kernel::procfs::meminfo`), in bytes where the kernel
//! gave kB. This module only lays the nodes side by side, in the kernel's
//! own row order, and turns the huge page counts into bytes with the
//! machine's huge page size, as numastat does, so every row reads in one
//! unit.

use std::collections::{BTreeMap, BTreeSet};

use numasleuth_parse::procfs::meminfo::Meminfo;
use serde::Serialize;

/// The rows of `nodeN/meminfo` in the order the kernel writes them
/// (`node_read_meminfo`, Linux 6.x); keys a later kernel adds follow, by
/// name.
const KERNEL_ORDER: &[&str] = &[
    "MemTotal",
    "MemFree",
    "MemUsed",
    "SwapCached",
    "Active",
    "Inactive",
    "Active(anon)",
    "Inactive(anon)",
    "Active(file)",
    "Inactive(file)",
    "Unevictable",
    "Mlocked",
    "HighTotal",
    "HighFree",
    "LowTotal",
    "LowFree",
    "Dirty",
    "Writeback",
    "FilePages",
    "Mapped",
    "AnonPages",
    "Shmem",
    "KernelStack",
    "ShadowCallStack",
    "PageTables",
    "SecPageTables",
    "NFS_Unstable",
    "Bounce",
    "WritebackTmp",
    "KReclaimable",
    "Slab",
    "SReclaimable",
    "SUnreclaim",
    "AnonHugePages",
    "ShmemHugePages",
    "ShmemPmdMapped",
    "FileHugePages",
    "FilePmdMapped",
    "Unaccepted",
    "HugePages_Total",
    "HugePages_Free",
    "HugePages_Surp",
];

/// Rows the kernel gives as counts of huge pages, not kB.
const HUGE_PAGE_COUNTS: &[&str] = &["HugePages_Total", "HugePages_Free", "HugePages_Surp"];

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct MeminfoRow {
    /// The kernel's name for the row (`MemFree`, `Active(file)`).
    pub name: String,
    /// Bytes per node; a node whose file lacks the row is absent.
    pub bytes_by_node: BTreeMap<u32, u64>,
    pub total_bytes: u64,
    /// For the huge page rows: the counts the kernel gave.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pages_by_node: Option<BTreeMap<u32, u64>>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct MeminfoTable {
    pub nodes: Vec<u32>,
    /// The default huge page size the counts were multiplied by.
    pub huge_page_bytes: Option<u64>,
    pub rows: Vec<MeminfoRow>,
    /// What could not be shown, and why.
    pub notes: Vec<String>,
}

/// The nodes' meminfo side by side. `huge_page_bytes` is `Hugepagesize`
/// from /proc/meminfo; without it the huge page rows are left out, with a
/// note, since a count of pages of unknown size is not a memory size.
pub fn table(nodes: &[(u32, &Meminfo)], huge_page_bytes: Option<u64>) -> MeminfoTable {
    let names: BTreeSet<&str> = nodes
        .iter()
        .flat_map(|(_, info)| info.values.keys().map(String::as_str))
        .collect();
    let mut order: Vec<&str> = KERNEL_ORDER.iter().copied().filter(|n| names.contains(n)).collect();
    order.extend(names.iter().copied().filter(|n| !KERNEL_ORDER.contains(n)));
    let mut notes = Vec::new();
    let mut rows = Vec::new();
    for name in order {
        let values = by_node(nodes.iter().filter_map(|(id, info)| info.get(name).map(|v| (*id, v))));
        let row = if HUGE_PAGE_COUNTS.contains(&name) {
            let Some(page_bytes) = huge_page_bytes else {
                if notes.is_empty() {
                    notes.push(
                        "HugePages_* left out: the huge page size (Hugepagesize in /proc/meminfo) is unknown".into(),
                    );
                }
                continue;
            };
            let bytes = by_node(values.iter().map(|(n, c)| (*n, c.saturating_mul(page_bytes))));
            MeminfoRow {
                name: name.to_string(),
                total_bytes: sum(&bytes),
                bytes_by_node: bytes,
                pages_by_node: Some(values),
            }
        } else {
            MeminfoRow {
                name: name.to_string(),
                total_bytes: sum(&values),
                bytes_by_node: values,
                pages_by_node: None,
            }
        };
        rows.push(row);
    }
    MeminfoTable {
        nodes: nodes.iter().map(|(id, _)| *id).collect(),
        huge_page_bytes,
        rows,
        notes,
    }
}

/// The map of a row, built by insertion: `collect` sorts a Vec of the
/// pairs first, several times the work for a row of a few nodes.
fn by_node(pairs: impl Iterator<Item = (u32, u64)>) -> BTreeMap<u32, u64> {
    let mut map = BTreeMap::new();
    for (node, value) in pairs {
        map.insert(node, value);
    }
    map
}

fn sum(values: &BTreeMap<u32, u64>) -> u64 {
    values.values().fold(0u64, |total, v| total.saturating_add(*v))
}

#[cfg(test)]
mod tests {
    use super::*;
    use numasleuth_parse::procfs::meminfo::parse;

    /// /sys/devices/system/node/node0/meminfo of a 2-node QEMU guest
    /// (Linux 6.1), cut to the rows that matter here, and node1 of the same
    /// guest.
    const NODE0: &str = "Node 0 MemTotal:        1004032 kB\nNode 0 MemFree:          851400 kB\n\
        Node 0 MemUsed:          152632 kB\nNode 0 Active(file):      20480 kB\nNode 0 Slab:              30720 kB\n\
        Node 0 HugePages_Total:     4\nNode 0 HugePages_Free:      4\nNode 0 HugePages_Surp:      0\n";
    const NODE1: &str = "Node 1 MemTotal:        1032192 kB\nNode 1 MemFree:          990208 kB\n\
        Node 1 MemUsed:           41984 kB\nNode 1 Active(file):       1024 kB\nNode 1 Slab:               8192 kB\n\
        Node 1 FutureField:        512 kB\nNode 1 HugePages_Total:     0\nNode 1 HugePages_Free:      0\n\
        Node 1 HugePages_Surp:      0\n";

    #[test]
    fn nodes_side_by_side_in_kernel_order_with_a_total() {
        let (a, b) = (parse(NODE0).unwrap(), parse(NODE1).unwrap());
        let t = table(&[(0, &a), (1, &b)], Some(2 << 20));
        let names: Vec<&str> = t.rows.iter().map(|r| r.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "MemTotal",
                "MemFree",
                "MemUsed",
                "Active(file)",
                "Slab",
                "HugePages_Total",
                "HugePages_Free",
                "HugePages_Surp",
                "FutureField"
            ]
        );
        let total = &t.rows[0];
        assert_eq!(total.bytes_by_node[&0], 1004032 * 1024);
        assert_eq!(total.total_bytes, (1004032 + 1032192) * 1024);
        let huge = t.rows.iter().find(|r| r.name == "HugePages_Total").unwrap();
        assert_eq!(huge.bytes_by_node[&0], 4 * (2 << 20));
        assert_eq!(huge.pages_by_node.as_ref().unwrap()[&0], 4);
        // A row one node lacks is absent there, not zero.
        let future = t.rows.iter().find(|r| r.name == "FutureField").unwrap();
        assert!(!future.bytes_by_node.contains_key(&0));
        assert_eq!(future.total_bytes, 512 * 1024);
        assert!(t.notes.is_empty());
    }

    #[test]
    fn huge_page_counts_without_a_page_size_are_left_out_with_a_note() {
        let a = parse(NODE0).unwrap();
        let t = table(&[(0, &a)], None);
        assert!(t.rows.iter().all(|r| !r.name.starts_with("HugePages_")));
        assert_eq!(t.notes.len(), 1, "{:?}", t.notes);
    }

    #[test]
    fn huge_sums_saturate_instead_of_wrapping() {
        let a = parse("Node 0 MemTotal: 18446744073709551 kB\n").unwrap();
        let t = table(&[(0, &a), (1, &a)], None);
        assert_eq!(t.rows[0].total_bytes, u64::MAX);
    }
}
