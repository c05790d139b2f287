//! Which pages a bisection can move, and where each one goes.
//!
//! Only resident pages the kernel names a node for can take part: a page
//! never touched, swapped out or hidden between NUMA-balancing hinting
//! faults has no placement to test. On a two-node machine each page goes
//! to the node it is not on; with more nodes the user says where.

use std::collections::BTreeMap;

use numasleuth_parse::pages::Residency;
use serde::Serialize;
use thiserror::Error;

/// Why no page can be bisected on this machine as asked.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum CandidatesError {
    #[error(
        "bisection moves pages between nodes, and this machine has {} node(s) with memory ({}): there is no \
         other node to move them to",
        .memory_nodes.len(),
        listed(.memory_nodes)
    )]
    OneNode { memory_nodes: Vec<u32> },
    #[error("--to-node {node}: not a node with memory (nodes with memory: {})", listed(.memory_nodes))]
    NotAMemoryNode { node: u32, memory_nodes: Vec<u32> },
    #[error(
        "this machine has {} nodes with memory ({}): say where the pages go with --to-node N",
        .memory_nodes.len(),
        listed(.memory_nodes)
    )]
    WhereTo { memory_nodes: Vec<u32> },
}

fn listed(nodes: &[u32]) -> String {
    nodes.iter().map(u32::to_string).collect::<Vec<_>>().join(", ")
}

/// The pages that take part, in address order, with their two nodes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Candidates {
    pub addresses: Vec<u64>,
    /// The node each page is on now, where it goes back to.
    pub home: Vec<u32>,
    /// The node each page is sent to.
    pub away: Vec<u32>,
    /// Pages that cannot take part, counted by why.
    pub left_out: BTreeMap<String, u64>,
}

/// Picks the candidates among `addresses` (with their `residency`), given
/// the nodes with memory and the `--to-node` asked for, if any.
pub fn candidates(
    addresses: &[u64],
    residency: &[Residency],
    memory_nodes: &[u32],
    to_node: Option<u32>,
) -> Result<Candidates, CandidatesError> {
    if memory_nodes.len() < 2 {
        return Err(CandidatesError::OneNode {
            memory_nodes: memory_nodes.to_vec(),
        });
    }
    if let Some(node) = to_node {
        if !memory_nodes.contains(&node) {
            return Err(CandidatesError::NotAMemoryNode {
                node,
                memory_nodes: memory_nodes.to_vec(),
            });
        }
    } else if memory_nodes.len() > 2 {
        return Err(CandidatesError::WhereTo {
            memory_nodes: memory_nodes.to_vec(),
        });
    }
    let mut found = Candidates {
        addresses: Vec::new(),
        home: Vec::new(),
        away: Vec::new(),
        left_out: BTreeMap::new(),
    };
    for (&address, &state) in addresses.iter().zip(residency) {
        let why = match state {
            Residency::Node(home) => {
                let away = to_node.unwrap_or_else(|| memory_nodes.iter().copied().find(|&n| n != home).unwrap_or(home));
                if away != home {
                    found.addresses.push(address);
                    found.home.push(home);
                    found.away.push(away);
                    continue;
                }
                format!("already on node {away}")
            }
            other => other.describe(),
        };
        *found.left_out.entry(why).or_insert(0) += 1;
    }
    Ok(found)
}

#[cfg(test)]
mod tests {
    use super::*;

    const PAGE: u64 = 4096;

    fn pages(n: u64) -> Vec<u64> {
        (0..n).map(|i| 0x40_0000 + i * PAGE).collect()
    }

    #[test]
    fn two_nodes_send_each_page_to_the_other_one() {
        let states = [
            Residency::Node(0),
            Residency::Node(1),
            Residency::NotYetTouched,
            Residency::Node(0),
        ];
        let c = candidates(&pages(4), &states, &[0, 1], None).unwrap();
        assert_eq!(c.addresses, vec![0x40_0000, 0x40_1000, 0x40_3000]);
        assert_eq!(c.home, vec![0, 1, 0]);
        assert_eq!(c.away, vec![1, 0, 1]);
        assert_eq!(c.left_out.get("not yet touched"), Some(&1));
    }

    #[test]
    fn to_node_leaves_out_pages_already_there() {
        let states = [Residency::Node(0), Residency::Node(2), Residency::HintingFault];
        let c = candidates(&pages(3), &states, &[0, 1, 2], Some(2)).unwrap();
        assert_eq!((c.addresses.len(), c.away.clone()), (1, vec![2]));
        assert_eq!(c.left_out.get("already on node 2"), Some(&1));
        assert_eq!(c.left_out.values().sum::<u64>(), 2);
    }

    #[test]
    fn refusals_name_the_nodes() {
        let one = candidates(&pages(1), &[Residency::Node(0)], &[0], None)
            .unwrap_err()
            .to_string();
        assert!(one.contains("1 node(s) with memory (0)"), "{one}");
        let three = candidates(&pages(1), &[Residency::Node(0)], &[0, 1, 3], None)
            .unwrap_err()
            .to_string();
        assert!(three.contains("--to-node"), "{three}");
        let missing = candidates(&pages(1), &[Residency::Node(0)], &[0, 1], Some(4))
            .unwrap_err()
            .to_string();
        assert!(missing.contains("--to-node 4"), "{missing}");
    }
}
