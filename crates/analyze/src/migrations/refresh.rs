//! `top`'s view of migration between two refreshes: how many threads are
//! on another CPU or node than at the last reading (the memory on nodes
//! none of them run on is `model::process::remote_bytes`). Unlike
//! [`super::MoveCounter`], which keeps each thread's path over one run,
//! this compares two whole readings, so threads that exit are simply gone.

use std::collections::{BTreeMap, HashMap};

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
}
