//! The facts several commands ask of a [`Topology`], each defined once
//! here so the commands cannot disagree: whether a node holds memory, and
//! which node a CPU is on. `crates/analyze/tests/source_rules.rs` fails
//! when a copy appears elsewhere.

use std::collections::BTreeMap;

use numasleuth_parse::IdList;

use crate::{Node, Topology};

impl Node {
    /// Whether this node holds memory: `Some(false)` when the kernel says
    /// it has none (`has_memory` leaves it out, or its MemTotal is 0, and
    /// "none" wins over a conflicting "some"), `Some(true)` when either
    /// says it has some, `None` when neither was read. Callers choose what
    /// unknown means: counting nodes wants `== Some(true)`, refusing a
    /// target wants `== Some(false)`, so unknown never turns into a claim.
    pub fn holds_memory(&self) -> Option<bool> {
        let size_says = self.memory_total_bytes.map(|bytes| bytes > 0);
        match (self.has_memory, size_says) {
            (Some(false), _) | (_, Some(false)) => Some(false),
            (Some(true), _) | (_, Some(true)) => Some(true),
            (None, None) => None,
        }
    }

    /// Whether a buffer or a page may be placed here: the kernel does not
    /// say the node has no memory (unknown is given the benefit of the
    /// doubt, and the kernel's own refusal then says why).
    pub fn may_hold_memory(&self) -> bool {
        self.holds_memory() != Some(false)
    }

    /// The node's memory in bytes when it is known to hold some
    /// ([`Node::holds_memory`]) and its size was read: what shares of
    /// memory are computed over. `None` for a node without memory, so no
    /// caller divides by its zero.
    pub fn memory_bytes(&self) -> Option<u64> {
        self.memory_total_bytes
            .filter(|bytes| *bytes > 0 && self.holds_memory() == Some(true))
    }
}

/// The CPU model QEMU gives a guest whose instructions it emulates (TCG)
/// rather than runs on the host's CPU (KVM): "QEMU TCG CPU version 2.5+".
const EMULATED_CPU_MODEL: &str = "QEMU TCG CPU";

impl Topology {
    /// Whether the CPU is emulated instruction by instruction: then every
    /// "node" is the same host memory behind the emulator's own caches,
    /// and a timing says nothing about the hardware's interconnect.
    pub fn cpu_is_emulated(&self) -> bool {
        self.cpu_model
            .as_deref()
            .is_some_and(|m| m.contains(EMULATED_CPU_MODEL))
    }

    /// The nodes known to hold memory ([`Node::holds_memory`] says yes).
    pub fn memory_nodes(&self) -> IdList {
        self.nodes
            .iter()
            .filter(|n| n.holds_memory() == Some(true))
            .map(|n| n.id)
            .collect()
    }

    /// The node `cpu` is on: the node whose cpulist names it, else the
    /// node its own sysfs directory links to; `None` when neither says.
    /// Never a guess: an unknown CPU is not put on node 0.
    pub fn node_of_cpu(&self, cpu: u32) -> Option<u32> {
        self.nodes
            .iter()
            .find(|n| n.cpus.contains(cpu))
            .map(|n| n.id)
            .or_else(|| self.cpus.iter().find(|c| c.id == cpu)?.node)
    }

    /// [`Topology::node_of_cpu`] for every CPU whose node is known, as a
    /// map for loops that look up many samples.
    pub fn cpu_nodes(&self) -> BTreeMap<u32, u32> {
        let listed = self.cpus.iter().map(|c| c.id);
        let in_nodes = self.nodes.iter().flat_map(|n| n.cpus.iter());
        listed
            .chain(in_nodes)
            .filter_map(|cpu| Some((cpu, self.node_of_cpu(cpu)?)))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Cpu;

    fn node(id: u32, has_memory: Option<bool>, total: Option<u64>) -> Node {
        Node {
            id,
            has_memory,
            memory_total_bytes: total,
            ..Node::default()
        }
    }

    #[test]
    fn memory_is_known_only_when_the_kernel_says_and_none_wins() {
        assert_eq!(node(0, None, None).holds_memory(), None);
        assert_eq!(node(0, Some(true), None).holds_memory(), Some(true));
        assert_eq!(node(0, None, Some(4096)).holds_memory(), Some(true));
        assert_eq!(node(0, Some(false), Some(4096)).holds_memory(), Some(false));
        assert_eq!(node(0, Some(true), Some(0)).holds_memory(), Some(false));
        assert_eq!(node(0, None, Some(0)).holds_memory(), Some(false));
        let topo = Topology {
            nodes: vec![node(0, None, Some(1)), node(1, None, None), node(2, Some(false), None)],
            ..Topology::default()
        };
        assert_eq!(topo.memory_nodes(), IdList::new(vec![0]));
    }

    #[test]
    fn a_cpu_no_node_names_has_no_node() {
        let topo = Topology {
            nodes: vec![Node {
                id: 1,
                cpus: IdList::new(vec![2, 3]),
                ..Node::default()
            }],
            cpus: vec![
                Cpu {
                    id: 4,
                    node: Some(0),
                    ..Cpu::default()
                },
                Cpu {
                    id: 5,
                    ..Cpu::default()
                },
            ],
            ..Topology::default()
        };
        assert_eq!(topo.node_of_cpu(3), Some(1));
        assert_eq!(topo.node_of_cpu(4), Some(0));
        assert_eq!(topo.node_of_cpu(5), None);
        assert_eq!(topo.node_of_cpu(99), None);
        let map: Vec<(u32, u32)> = topo.cpu_nodes().into_iter().collect();
        assert_eq!(map, [(2, 1), (3, 1), (4, 0)]);
    }
}
