//! `/sys/devices/system/node`: node state masks and one directory per node.
//!
//! Its absence is a result, not an error: a kernel built without NUMA or
//! booted with `numa=off` has no node directory, and the model then shows one
//! implicit node.

use std::collections::BTreeMap;

use crate::cpulist::{IdList, MAX_NODE_IDS};
use crate::error::{quote, ParseError, ReadError};
use crate::procfs::meminfo::{self, Meminfo};
use crate::read;
use crate::root::Root;
use crate::unread::{Gaps, Unread};

pub const NODE_DIR: &str = "sys/devices/system/node";

/// The kernel's node state masks; each is absent on older kernels.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NodeStates {
    pub online: Option<IdList>,
    pub possible: Option<IdList>,
    pub has_cpu: Option<IdList>,
    pub has_memory: Option<IdList>,
    pub has_normal_memory: Option<IdList>,
}

/// HMAT performance of one access class (`access0`: any initiator,
/// `access1`: CPU initiators only), as the kernel reports it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AccessClass {
    pub class: u32,
    pub initiators: IdList,
    pub read_latency_ns: Option<u64>,
    pub write_latency_ns: Option<u64>,
    pub read_bandwidth_mb_per_sec: Option<u64>,
    pub write_bandwidth_mb_per_sec: Option<u64>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NodeFiles {
    pub id: u32,
    pub cpus: IdList,
    pub meminfo: Meminfo,
    /// SLIT row, one entry per online node in id order; `None` when absent.
    pub distances: Option<Vec<u32>>,
    pub numastat: Option<BTreeMap<String, u64>>,
    pub access: Vec<AccessClass>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NodeSysfs {
    pub states: NodeStates,
    pub nodes: Vec<NodeFiles>,
}

pub fn parse_distance(text: &str) -> Result<Vec<u32>, ParseError> {
    let row: Vec<u32> = text
        .split_whitespace()
        .map(|w| {
            w.parse()
                .map_err(|_| ParseError::new(format!("`{}` is not a distance", quote(w))))
        })
        .collect::<Result<_, _>>()?;
    if row.is_empty() {
        return Err(ParseError::new("empty distance row"));
    }
    if row.len() > MAX_NODE_IDS as usize {
        return Err(ParseError::new(format!(
            "{} distances, but there are at most {MAX_NODE_IDS} nodes",
            row.len()
        )));
    }
    Ok(row)
}

/// `numastat` and `vmstat`-style files: one `name value` pair per line.
pub fn parse_counters(text: &str) -> Result<BTreeMap<String, u64>, ParseError> {
    let mut counters = BTreeMap::new();
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let mut words = line.split_whitespace();
        let (Some(name), Some(value), None) = (words.next(), words.next(), words.next()) else {
            return Err(ParseError::new(format!("`{}` is not `name value`", quote(line))));
        };
        let value = value
            .parse()
            .map_err(|_| ParseError::new(format!("`{}` in `{}` is not a counter", quote(value), quote(line))))?;
        counters.insert(name.to_string(), value);
        if counters.len() > crate::read::MAX_KEYS {
            return Err(crate::read::too_many_keys());
        }
    }
    Ok(counters)
}

/// Each listed node's `numastat` or `vmstat` (`file`) counters, keyed by
/// node; a node without the file is left out (a kernel without NUMA has
/// no node directory at all), a malformed one is an error naming it.
pub fn read_counters(
    root: &Root,
    nodes: impl IntoIterator<Item = u32>,
    file: &str,
) -> Result<BTreeMap<u32, BTreeMap<String, u64>>, ReadError> {
    let mut out = BTreeMap::new();
    for node in nodes {
        if let Some(counters) = read::parsed(root, &format!("{NODE_DIR}/node{node}/{file}"), parse_counters)? {
            out.insert(node, counters);
        }
    }
    Ok(out)
}

/// Node ids from directory names `node0`, `node12`, ….
pub fn node_ids(names: &[String]) -> Vec<u32> {
    let mut ids: Vec<u32> = names
        .iter()
        .filter_map(|n| n.strip_prefix("node")?.parse().ok())
        .collect();
    ids.sort_unstable();
    ids
}

/// Reads the whole node tree; `None` when the kernel has no node sysfs (or
/// it cannot be listed, which is noted in `gaps`). A file that cannot be
/// used is noted and read as absent, so one bad file costs that fact, not
/// the topology.
pub fn read(root: &Root, gaps: &mut Gaps) -> Option<NodeSysfs> {
    let names = gaps.keep(root.list(NODE_DIR))?;
    let mut list = |name: &str| gaps.keep(read::node_list(root, &format!("{NODE_DIR}/{name}")));
    let states = NodeStates {
        online: list("online"),
        possible: list("possible"),
        has_cpu: list("has_cpu"),
        has_memory: list("has_memory"),
        has_normal_memory: list("has_normal_memory"),
    };
    let ids = crate::unread::ids_below(node_ids(&names), MAX_NODE_IDS, NODE_DIR, ("node", "nodes"), gaps);
    let nodes = ids.into_iter().filter_map(|id| read_node(root, id, gaps)).collect();
    Some(NodeSysfs { states, nodes })
}

/// `None` when the directory holds nothing that describes a node.
fn read_node(root: &Root, id: u32, gaps: &mut Gaps) -> Option<NodeFiles> {
    let dir = format!("{NODE_DIR}/node{id}");
    let cpus = read_node_cpus(root, &dir, gaps)?;
    let meminfo_path = format!("{dir}/meminfo");
    // An absent meminfo reads as unknown memory, like an unreadable one.
    let meminfo = match meminfo::read(root, &meminfo_path) {
        Ok(info) => info,
        Err(e) => {
            gaps.note(&e);
            Meminfo::default()
        }
    };
    Some(NodeFiles {
        id,
        cpus,
        meminfo,
        distances: gaps.keep(read::parsed(root, &format!("{dir}/distance"), parse_distance)),
        numastat: gaps.keep(read::parsed(root, &format!("{dir}/numastat"), parse_counters)),
        access: read_access(root, &dir, gaps),
    })
}

/// `cpulist` where the kernel has it, else the older `cpumap` mask, else the
/// `cpuN` links that every kernel puts in the node directory. An unreadable
/// file is noted and the next source tried.
fn read_node_cpus(root: &Root, dir: &str, gaps: &mut Gaps) -> Option<IdList> {
    if let Some(list) = gaps.keep(read::list(root, &format!("{dir}/cpulist"))) {
        return Some(list);
    }
    if let Some(list) = gaps.keep(read::parsed(root, &format!("{dir}/cpumap"), IdList::parse_mask)) {
        return Some(list);
    }
    let names = gaps.keep(root.list(dir)).unwrap_or_default();
    if !names.iter().any(|n| n == "meminfo" || n == "cpulist" || n == "cpumap") {
        // Not even meminfo: this is not a node directory we can describe.
        gaps.push(Unread::new(
            crate::error::display_path(dir),
            "holds no cpulist, cpumap or meminfo, so this node is left out",
        ));
        return None;
    }
    Some(
        names
            .iter()
            .filter_map(|n| n.strip_prefix("cpu")?.parse().ok())
            .collect(),
    )
}

fn read_access(root: &Root, dir: &str, gaps: &mut Gaps) -> Vec<AccessClass> {
    let mut classes = Vec::new();
    for class in 0..=1u32 {
        let initiators_dir = format!("{dir}/access{class}/initiators");
        let Some(names) = gaps.keep(root.list(&initiators_dir)) else {
            continue;
        };
        let mut number = |name: &str| gaps.keep(read::number(root, &format!("{initiators_dir}/{name}")));
        classes.push(AccessClass {
            class,
            initiators: node_ids(&names).into_iter().collect(),
            read_latency_ns: number("read_latency"),
            write_latency_ns: number("write_latency"),
            read_bandwidth_mb_per_sec: number("read_bandwidth"),
            write_bandwidth_mb_per_sec: number("write_bandwidth"),
        });
    }
    classes
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn distance_row() {
        // node1/distance in the 3-node QEMU guest (SLIT 10/21/30).
        assert_eq!(parse_distance("21 10 21\n").unwrap(), vec![21, 10, 21]);
        assert!(parse_distance("10 2x").is_err());
        assert!(parse_distance("\n").is_err());
    }

    #[test]
    fn numastat_counters() {
        // node0/numastat from this project's development VM.
        let text =
            "numa_hit 1364355\nnuma_miss 0\nnuma_foreign 0\ninterleave_hit 1122\nlocal_node 1364355\nother_node 0\n";
        let counters = parse_counters(text).unwrap();
        assert_eq!(counters["numa_hit"], 1364355);
        assert_eq!(counters.len(), 6);
        assert!(parse_counters("numa_hit\n").is_err());
        assert!(parse_counters("numa_hit 12 13\n").is_err());
    }

    #[test]
    fn counters_of_each_node_that_has_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let node = |n: u32| dir.path().join(format!("{NODE_DIR}/node{n}"));
        for n in [0, 1] {
            std::fs::create_dir_all(node(n)).unwrap();
        }
        std::fs::write(node(0).join("numastat"), "numa_hit 5\nnuma_miss 2\n").unwrap();
        std::fs::write(node(1).join("vmstat"), "nr_free_pages 7\n").unwrap();
        let root = Root::directory(dir.path()).unwrap();
        let numastat = read_counters(&root, [0, 1, 2], "numastat").unwrap();
        assert_eq!(numastat.keys().copied().collect::<Vec<_>>(), vec![0]);
        assert_eq!(numastat[&0]["numa_miss"], 2);
        std::fs::write(node(1).join("numastat"), "numa_hit five\n").unwrap();
        let err = read_counters(&root, [0, 1], "numastat").unwrap_err().to_string();
        assert!(err.contains("node1/numastat"), "{err}");
    }

    #[test]
    fn node_names() {
        let names = ["node10", "node2", "possible", "nodefoo", "has_cpu"].map(String::from);
        assert_eq!(node_ids(&names), vec![2, 10]);
    }

    proptest! {
        #[test]
        fn never_panic(text in "\\PC{0,80}") {
            let _ = parse_distance(&text);
            let _ = parse_counters(&text);
        }
    }
}
