//! `top`'s view of migration between two refreshes: how many threads are
//! on another CPU or node than at the last reading, and how much of a
//! process's memory sits on nodes none of its threads run on. Unlike
//! [`super::MoveCounter`], which keeps each thread's path over one run,
//! this compares two whole readings, so threads that exit are simply gone.

use std::collections::{BTreeMap, BTreeSet, HashMap};

/// Threads that moved between two readings of `(tid, cpu)`, as
/// `(cpu moves, node moves)`; a thread seen only once has not moved.
/// `cpu_node` maps a CPU to its node (an unknown CPU is its own node).
pub fn moves_between(before: &HashMap<u32, u32>, now: &[(u32, u32)], cpu_node: &BTreeMap<u32, u32>) -> (u64, u64) {
    let (mut cpu, mut node) = (0, 0);
    for (tid, cpu_now) in now {
        let Some(cpu_then) = before.get(tid) else { continue };
        if cpu_then != cpu_now {
            cpu += 1;
            if cpu_node.get(cpu_then) != cpu_node.get(cpu_now) {
                node += 1;
            }
        }
    }
    (cpu, node)
}

/// Bytes on nodes where none of the threads run; `None` when no thread's
/// node is known.
pub fn remote_bytes(by_node: &BTreeMap<u32, u64>, thread_nodes: &BTreeSet<u32>) -> Option<u64> {
    if thread_nodes.is_empty() {
        return None;
    }
    Some(
        by_node
            .iter()
            .filter(|(node, _)| !thread_nodes.contains(node))
            .fold(0u64, |sum, (_, b)| sum.saturating_add(*b)),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn moves_count_cpu_and_node_changes_of_threads_seen_twice() {
        let cpu_node: BTreeMap<u32, u32> = [(0, 0), (1, 0), (2, 1), (3, 1)].into_iter().collect();
        let before: HashMap<u32, u32> = [(10, 0), (11, 1), (12, 2)].into_iter().collect();
        // 10 stays, 11 moves within node 0, 12 moves to node 0, 13 is new.
        let now = [(10, 0), (11, 0), (12, 1), (13, 3)];
        assert_eq!(moves_between(&before, &now, &cpu_node), (2, 1));
        assert_eq!(moves_between(&HashMap::new(), &now, &cpu_node), (0, 0));
    }

    #[test]
    fn remote_is_memory_where_no_thread_runs() {
        let by_node: BTreeMap<u32, u64> = [(0, 4096), (1, 8192), (2, u64::MAX)].into_iter().collect();
        assert_eq!(remote_bytes(&by_node, &[0].into_iter().collect()), Some(u64::MAX));
        assert_eq!(remote_bytes(&by_node, &[0, 2].into_iter().collect()), Some(8192));
        assert_eq!(remote_bytes(&by_node, &BTreeSet::new()), None);
    }
}
