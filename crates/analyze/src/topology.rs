//! What `topo` must warn about: limits the user may not know they are
//! under (offline CPUs, cpusets, no NUMA at all) and data the kernel did not
//! give us.

use numasleuth_model::{NumaSource, Topology};

pub fn warnings(topo: &Topology) -> Vec<String> {
    let mut out = Vec::new();
    if topo.numa == NumaSource::Implicit {
        out.push(
            "no /sys/devices/system/node: the kernel has no NUMA support or was booted with numa=off; \
             showing one implicit node 0 holding every CPU and all memory"
                .to_string(),
        );
    }
    let offline = topo.offline_cpus();
    if !offline.is_empty() {
        let (noun, verb, pronoun) = if offline.len() == 1 {
            ("CPU", "is", "it runs")
        } else {
            ("CPUs", "are", "they run")
        };
        out.push(format!(
            "{noun} {offline} {verb} offline (/sys/devices/system/cpu/online); {pronoun} nothing until brought back \
             with `echo 1 > /sys/devices/system/cpu/cpuN/online`"
        ));
    }
    out.extend(restriction_warnings(topo));
    for node in &topo.nodes {
        if topo.numa == NumaSource::Sysfs && node.distances.iter().all(Option::is_none) {
            out.push(format!(
                "node {}: no distance table (/sys/devices/system/node/node{}/distance); distances unknown",
                node.id, node.id
            ));
        }
    }
    if topo.nodes.len() > 1 {
        for device in topo.devices.iter().filter(|d| d.node.is_none()) {
            out.push(format!(
                "{} {} ({}): firmware reports no NUMA node (numa_node = -1), so its locality is unknown",
                device.kind, device.name, device.pci
            ));
        }
    }
    out
}

fn restriction_warnings(topo: &Topology) -> Vec<String> {
    let mut out = Vec::new();
    let r = &topo.restrictions;
    let cgroup = match (&r.cgroup_version, &r.cgroup_path) {
        (Some(version), Some(path)) => format!("; cgroup v{version} cpuset {path}"),
        _ => String::new(),
    };
    let online = topo.online_cpus();
    if let Some(allowed) = &r.allowed_cpus {
        let outside = online.difference(allowed);
        if !outside.is_empty() {
            out.push(format!(
                "this process may run only on CPUs {allowed} of online {online} (Cpus_allowed_list{cgroup}); \
                 CPUs {outside} are off limits"
            ));
        }
    }
    let memory_nodes = topo.memory_nodes();
    if let Some(allowed) = &r.allowed_mems {
        let outside = memory_nodes.difference(allowed);
        if !outside.is_empty() {
            out.push(format!(
                "this process may allocate only on nodes {allowed} (Mems_allowed_list{cgroup}); \
                 memory on nodes {outside} is off limits"
            ));
        }
    }
    out
}

/// The other node with memory at the smallest SLIT distance from `node`
/// (lowest id on a tie, and last when the distance is unknown).
pub fn nearest_other_node(topo: &Topology, node: u32) -> Option<u32> {
    let distances = topo.node(node).map(|n| n.distances.clone()).unwrap_or_default();
    topo.nodes
        .iter()
        .enumerate()
        .filter(|(_, n)| n.id != node && n.may_hold_memory())
        .min_by_key(|(i, n)| (distances.get(*i).copied().flatten().unwrap_or(u32::MAX), n.id))
        .map(|(_, n)| n.id)
}

#[cfg(test)]
mod tests {
    use numasleuth_model::Node;
    use numasleuth_parse::IdList;

    use super::*;

    fn node(id: u32, distances: &[u32], memory_bytes: u64) -> Node {
        Node {
            id,
            cpus: IdList::new(vec![id]),
            memory_total_bytes: Some(memory_bytes),
            distances: distances.iter().map(|&d| Some(d)).collect(),
            ..Node::default()
        }
    }

    fn topo(nodes: Vec<Node>) -> Topology {
        Topology {
            numa: NumaSource::Sysfs,
            nodes,
            cpus: Vec::new(),
            ..Topology::default()
        }
    }

    #[test]
    fn nearest_other_node_follows_the_slit_and_skips_memoryless_nodes() {
        let gib = 1 << 30;
        // Node 1 is nearest to 0 but has no memory; node 3 ties node 2 at 21.
        let t = topo(vec![
            node(0, &[10, 12, 21, 21], gib),
            node(1, &[12, 10, 21, 21], 0),
            node(2, &[21, 21, 10, 30], gib),
            node(3, &[21, 21, 30, 10], gib),
        ]);
        assert_eq!(nearest_other_node(&t, 0), Some(2));
        assert_eq!(nearest_other_node(&t, 3), Some(0));
        assert!(!t.nodes[1].may_hold_memory());
        assert_eq!(nearest_other_node(&topo(vec![node(0, &[10], gib)]), 0), None);
    }

    #[test]
    fn an_implicit_topology_says_numa_is_off() {
        let mut t = topo(vec![node(0, &[10], 1 << 30)]);
        t.numa = NumaSource::Implicit;
        let w = warnings(&t);
        assert!(w.iter().any(|w| w.starts_with("no /sys/devices/system/node")), "{w:?}");
    }
}
