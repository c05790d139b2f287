//! Reading `sysfs::node`; its format, types and parser are `numasleuth_parse::sysfs::node`.

pub use numasleuth_parse::sysfs::node::*;

use crate::cpulist::{IdList, MAX_NODE_IDS};
use crate::error::ReadError;
use crate::procfs::meminfo::{self, Meminfo};
use crate::read;
use crate::root::Root;
use crate::unread::{Gaps, Unread};
use std::collections::BTreeMap;

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

/// Each node's `meminfo` and nothing else, what `numastat -m` reads:
/// `None` when the kernel has no node sysfs (or it cannot be listed,
/// noted). A node without the file is left out; an unreadable or malformed
/// one is noted and left out.
pub fn read_meminfo(root: &Root, gaps: &mut Gaps) -> Option<Vec<(u32, Meminfo)>> {
    let names = gaps.keep(root.list(NODE_DIR))?;
    let ids = crate::unread::ids_below(node_ids(&names), MAX_NODE_IDS, NODE_DIR, ("node", "nodes"), gaps);
    let mut nodes = Vec::with_capacity(ids.len());
    for id in ids {
        if let Some(info) = gaps.ok(meminfo::read(root, &format!("{NODE_DIR}/node{id}/meminfo"))) {
            nodes.push((id, info));
        }
    }
    Some(nodes)
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
    fn meminfo_alone_of_each_node_with_a_usable_one() {
        let dir = tempfile::tempdir().unwrap();
        let root = Root::directory(dir.path()).unwrap();
        let mut gaps = Gaps::default();
        assert!(read_meminfo(&root, &mut gaps).is_none(), "no node directory: no NUMA");
        assert!(gaps.is_empty());
        let node = |n: u32| dir.path().join(format!("{NODE_DIR}/node{n}"));
        for n in [0, 1, 2] {
            std::fs::create_dir_all(node(n)).unwrap();
        }
        std::fs::write(node(0).join("meminfo"), "Node 0 MemTotal:       1024 kB\n").unwrap();
        std::fs::write(node(1).join("meminfo"), "Node 1 MemTotal:  lots kB\n").unwrap();
        // node2 has no meminfo (a CPU-only node on an old kernel): left out.
        let nodes = read_meminfo(&root, &mut gaps).unwrap();
        assert_eq!(nodes.iter().map(|(id, _)| *id).collect::<Vec<_>>(), vec![0]);
        assert_eq!(nodes[0].1.get("MemTotal"), Some(1024 * 1024));
        let unread: Vec<String> = gaps.into_unread().iter().map(|u| u.to_string()).collect();
        assert_eq!(unread.len(), 1, "{unread:?}");
        assert!(unread[0].contains("node1/meminfo"), "{unread:?}");
    }
}
