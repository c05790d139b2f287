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
    let memory_nodes: numasleuth_kernel::IdList = topo
        .nodes
        .iter()
        .filter(|n| n.has_memory.unwrap_or(n.memory_total_bytes.unwrap_or(0) > 0))
        .map(|n| n.id)
        .collect();
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
