//! `/sys/devices/system/node`: node state masks and one directory per node.
//!
//! Its absence is a result, not an error: a kernel built without NUMA or
//! booted with `numa=off` has no node directory, and the model then shows one
//! implicit node.

use std::collections::BTreeMap;

use crate::cpulist::{IdList, MAX_NODE_IDS};
use crate::error::{quote, ParseError};
use crate::procfs::meminfo::Meminfo;

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
/// `access1`: CPU initiators only), as the kernel reports it; a document
/// (`topo --json`'s `hmat`) names the class and its initiators in full.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct AccessClass {
    #[serde(rename = "access_class")]
    pub class: u32,
    #[serde(rename = "initiator_nodes")]
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

/// Node ids from directory names `node0`, `node12`, ….
pub fn node_ids(names: &[String]) -> Vec<u32> {
    let mut ids: Vec<u32> = names
        .iter()
        .filter_map(|n| n.strip_prefix("node")?.parse().ok())
        .collect();
    ids.sort_unstable();
    ids
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
