//! What the guest kernel itself reported (the "kernel" section, printed by
//! `kernel_facts` in initramfs.rs), parsed independently of numasleuth.
//!
//! Why a second, naive reading: when a check fails we need to know whether
//! QEMU built a different machine than intended (a test-bed problem) or
//! numasleuth misread the one it got (a numasleuth bug).

use std::collections::BTreeMap;

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NodeFacts {
    pub cpus: Vec<u32>,
    /// This node's row of the distance matrix, as in `nodeN/distance`.
    pub distance: Vec<u32>,
    pub memtotal_kb: u64,
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NetFacts {
    /// PCI address, e.g. "0000:11:01.0".
    pub pci: String,
    /// The device's `numa_node` (-1 when the firmware gave none).
    pub numa_node: i32,
    pub local_cpus: Vec<u32>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct KernelFacts {
    pub release: String,
    pub nodes: BTreeMap<u32, NodeFacts>,
    /// cpu id -> online.
    pub cpus: BTreeMap<u32, bool>,
    /// cpu id -> node, from the `cpuN/nodeM` link.
    pub cpu_nodes: BTreeMap<u32, u32>,
    pub nets: BTreeMap<String, NetFacts>,
}

/// Parses "key id field value..." lines. Unknown lines are ignored, bad
/// numbers are errors (they mean the guest printed something unexpected).
pub fn parse(text: &str) -> Result<KernelFacts, String> {
    let mut f = KernelFacts::default();
    for line in text.lines() {
        let mut parts = line.splitn(4, ' ');
        let (Some(key), Some(id), Some(field)) = (parts.next(), parts.next(), parts.next()) else {
            continue;
        };
        let value = parts.next().unwrap_or("").trim();
        let bad = |what: &str| format!("kernel facts: bad {what} in line {line:?}");
        match (key, field) {
            ("release", _) => f.release = value.to_string(),
            ("node", _) => {
                let id: u32 = id.parse().map_err(|_| bad("node id"))?;
                let node = f.nodes.entry(id).or_default();
                match field {
                    "cpulist" => node.cpus = parse_cpulist(value).ok_or_else(|| bad("cpulist"))?,
                    "distance" => {
                        node.distance = value
                            .split_whitespace()
                            .map(str::parse)
                            .collect::<Result<_, _>>()
                            .map_err(|_| bad("distance"))?
                    }
                    "memtotal_kb" => node.memtotal_kb = value.parse().map_err(|_| bad("MemTotal"))?,
                    _ => {}
                }
            }
            ("cpu", "online") => {
                let id: u32 = id.parse().map_err(|_| bad("cpu id"))?;
                f.cpus.insert(id, value == "1");
            }
            ("cpu", "node") => {
                let id: u32 = id.parse().map_err(|_| bad("cpu id"))?;
                f.cpu_nodes.insert(id, value.parse().map_err(|_| bad("cpu node"))?);
            }
            ("net", _) => {
                let net = f.nets.entry(id.to_string()).or_default();
                match field {
                    "pci" => net.pci = value.to_string(),
                    "numa_node" => net.numa_node = value.parse().map_err(|_| bad("numa_node"))?,
                    "local_cpulist" => net.local_cpus = parse_cpulist(value).ok_or_else(|| bad("local_cpulist"))?,
                    _ => {}
                }
            }
            _ => {}
        }
    }
    Ok(f)
}

/// Parses the kernel's list format ("0-1,4,6-7"; empty for none).
pub fn parse_cpulist(s: &str) -> Option<Vec<u32>> {
    let mut out = Vec::new();
    for part in s.trim().split(',').filter(|p| !p.is_empty()) {
        match part.split_once('-') {
            Some((a, b)) => {
                let (a, b): (u32, u32) = (a.parse().ok()?, b.parse().ok()?);
                if a > b {
                    return None;
                }
                out.extend(a..=b);
            }
            None => out.push(part.parse().ok()?),
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpulists() {
        assert_eq!(parse_cpulist("0-1,4\n"), Some(vec![0, 1, 4]));
        assert_eq!(parse_cpulist(""), Some(vec![]));
        assert_eq!(parse_cpulist("3-1"), None);
        assert_eq!(parse_cpulist("x"), None);
    }

    #[test]
    fn facts_lines() {
        let text = "release - - 6.1.0-56-amd64\n\
                    node 0 cpulist 0-1\nnode 0 distance 10 21 30\nnode 0 memtotal_kb 480000\n\
                    node 2 cpulist \nnode 2 distance 30 21 10\n\
                    cpu 0 online 1\ncpu 3 online 0\ncpu 3 node 1\n\
                    net eth0 pci 0000:11:01.0\nnet eth0 numa_node 1\nnet eth0 local_cpulist 2-3\n";
        let f = parse(text).unwrap();
        assert_eq!(f.release, "6.1.0-56-amd64");
        assert_eq!(f.nodes[&0].cpus, vec![0, 1]);
        assert_eq!(f.nodes[&0].distance, vec![10, 21, 30]);
        assert_eq!(f.nodes[&0].memtotal_kb, 480000);
        assert!(f.nodes[&2].cpus.is_empty());
        assert!(!f.cpus[&3]);
        assert_eq!(f.cpu_nodes[&3], 1);
        assert_eq!(f.nets["eth0"].numa_node, 1);
        assert_eq!(f.nets["eth0"].local_cpus, vec![2, 3]);
        assert!(parse("node x cpulist 0").is_err());
    }
}
