//! Topology sanity: CPU-less nodes, offline CPUs, several nodes per
//! package (SNC/NPS), NUMA turned off or faked, and cpuset limits.

use std::collections::BTreeMap;

use numasleuth_model::{NumaSource, Topology};
use numasleuth_parse::gather::HostReadings;
use numasleuth_parse::IdList;

use super::CheckId;
use crate::findings::{incident, Diagnosis, Evidence, Finding, Severity};

pub fn check(topo: &Topology, host: &HostReadings, out: &mut Diagnosis) {
    out.ran(CheckId::CpuLessNodes, cpu_less(topo));
    out.ran(CheckId::OfflineCpus, offline(topo));
    out.ran(CheckId::NodesPerPackage, nodes_per_package(topo));
    // Without /proc/cmdline only the package count speaks; an unreadable
    // one makes this check partial.
    out.ran(
        CheckId::NumaDisabled,
        numa_disabled(topo, host.settings.kernel_cmdline.as_deref()),
    );
    out.ran(CheckId::CgroupRestricted, cgroup(topo));
}

fn cpu_less(topo: &Topology) -> Vec<Finding> {
    let nodes: Vec<u32> = topo
        .nodes
        .iter()
        .filter(|n| !n.has_cpus() && n.memory_bytes().is_some())
        .map(|n| n.id)
        .collect();
    if nodes.is_empty() {
        return Vec::new();
    }
    vec![Finding {
        id: CheckId::CpuLessNodes.as_str(),
        severity: Severity::Info,
        confidence: None,
        title: format!("node(s) {} hold memory but no CPUs (CXL, HBM, PMEM or device memory)", numasleuth_parse::human_list(&nodes)),
        evidence: topo
            .nodes
            .iter()
            .filter(|n| !n.has_cpus())
            .map(|n| {
                let distances: Vec<String> =
                    n.distances.iter().map(|d| d.map_or("?".to_string(), |v| v.to_string())).collect();
                let text = format!(
                    "node {}: empty cpulist, {} MiB (/sys/devices/system/node/node{}/meminfo), distances {}",
                    n.id,
                    super::mib(n.memory_bytes().unwrap_or(0)),
                    n.id,
                    distances.join(" ")
                );
                // All the row or none: a list with holes would shift columns.
                let known: Option<Vec<u32>> = n.distances.iter().copied().collect();
                Evidence::new(format!("/sys/devices/system/node/node{}", n.id), text)
                    .with("node", n.id)
                    .with("memory_total_bytes", n.memory_bytes().unwrap_or(0))
                    .with_some("distances", known)
            })
            .collect(),
        remedy: "Every access to these nodes is remote. Place data there only on purpose: \
                 `numactl --membind=<cpu nodes>` for latency-bound work, or `numactl --preferred-many`/`--interleave` \
                 to add their capacity or bandwidth; check memory tiering with `cat /sys/kernel/mm/numa/demotion_enabled`."
            .into(),
        incident: None,
        explains: Vec::new(),
    }]
}

fn offline(topo: &Topology) -> Vec<Finding> {
    let offline = topo.offline_cpus();
    if offline.is_empty() {
        return Vec::new();
    }
    vec![Finding {
        id: CheckId::OfflineCpus.as_str(),
        severity: Severity::Warning,
        confidence: None,
        title: format!("CPUs {offline} are offline"),
        evidence: vec![Evidence::new(
            "/sys/devices/system/cpu/online",
            format!(
                "/sys/devices/system/cpu/online lists {} of {} CPUs",
                topo.online_cpus(),
                topo.cpus.len()
            ),
        )
        .with("online_cpus", &topo.online_cpus())
        .with("offline_cpus", &offline)
        .with("cpus", topo.cpus.len())],
        remedy: format!(
            "If unintended, bring them back: `for c in {}; do echo 1 > /sys/devices/system/cpu/cpu$c/online; done` \
             (check nosmt/maxcpus= on the kernel command line)",
            offline.iter().map(|c| c.to_string()).collect::<Vec<_>>().join(" ")
        ),
        incident: None,
        explains: Vec::new(),
    }]
}

fn nodes_per_package(topo: &Topology) -> Vec<Finding> {
    let mut by_package: BTreeMap<u32, Vec<u32>> = BTreeMap::new();
    for cpu in &topo.cpus {
        if let (Some(package), Some(node)) = (cpu.package, cpu.node) {
            let nodes = by_package.entry(package).or_default();
            if !nodes.contains(&node) {
                nodes.push(node);
            }
        }
    }
    let split: Vec<Evidence> = by_package
        .iter()
        .filter(|(_, nodes)| nodes.len() > 1)
        .map(|(package, nodes)| {
            let nodes = IdList::new(nodes.clone());
            Evidence::new(
                "/sys/devices/system/cpu/cpu*/topology/physical_package_id",
                format!("package {package} spans nodes {nodes}"),
            )
            .with("package", *package)
            .with("nodes", &nodes)
        })
        .collect();
    if split.is_empty() {
        return Vec::new();
    }
    vec![Finding {
        id: CheckId::NodesPerPackage.as_str(),
        severity: Severity::Info,
        confidence: None,
        title: "several NUMA nodes per package (sub-NUMA clustering / NPS mode)".into(),
        evidence: split,
        remedy:
            "Pin and bind per node, not per socket: `numactl --cpunodebind=N --membind=N`. Cross-node traffic inside \
                 a package is cheaper than across sockets but not free; measure it with `numasleuth mem`."
                .into(),
        incident: Some(incident::REMOTE_GLOBAL),
        explains: Vec::new(),
    }]
}

fn numa_disabled(topo: &Topology, cmdline: Option<&str>) -> Vec<Finding> {
    let words: Vec<&str> = cmdline.unwrap_or("").split_whitespace().collect();
    let mut out = Vec::new();
    let packages = topo.distinct(|c| c.package);
    if words.contains(&"numa=off") || (topo.numa == NumaSource::Implicit && packages > 1) {
        out.push(Finding {
            id: CheckId::NumaDisabled.as_str(),
            severity: Severity::Warning,
            confidence: None,
            title: format!("NUMA is off, yet the machine has {packages} package(s)"),
            evidence: vec![
                Evidence::new(
                    "/proc/cmdline",
                    format!("/proc/cmdline: {}", cmdline.unwrap_or("(unreadable)")),
                ),
                Evidence::new(
                    "/sys/devices/system/node",
                    format!(
                        "numa source: {}",
                        match topo.numa {
                            NumaSource::Sysfs => "/sys/devices/system/node",
                            NumaSource::Implicit => "none (no /sys/devices/system/node: one implicit node)",
                        }
                    ),
                )
                .with("packages", packages)
                .with("nodes", topo.nodes.len()),
            ],
            remedy: "Remove numa=off from the kernel command line (and enable NUMA in firmware, not node \
                     interleaving) so the kernel can place memory near the CPUs that use it."
                .into(),
            incident: Some(incident::REMOTE_GLOBAL),
            explains: Vec::new(),
        });
    }
    if let Some(fake) = words.iter().find(|w| w.starts_with("numa=fake")) {
        out.push(Finding {
            id: CheckId::NumaDisabled.as_str(),
            severity: Severity::Info,
            confidence: None,
            title: "fake NUMA nodes: node boundaries do not reflect hardware".into(),
            evidence: vec![Evidence::new("/proc/cmdline", format!("/proc/cmdline contains {fake}"))],
            remedy: "Do not read measured node-to-node differences as hardware effects; remove numa=fake for \
                     production."
                .into(),
            incident: Some(incident::REMOTE_GLOBAL),
            explains: Vec::new(),
        });
    }
    out
}

/// Evidence that this process may use fewer CPUs than are online, and
/// whether the cpuset cgroup, its own affinity mask, or both narrowed them.
fn cpu_limits(topo: &Topology, evidence: &mut Vec<Evidence>) -> (bool, bool) {
    let r = &topo.restrictions;
    let online = topo.online_cpus();
    let (mut by_cpuset, mut by_affinity) = (false, false);
    if let Some(allowed) = &r.allowed_cpus {
        if !online.difference(allowed).is_empty() {
            evidence.push(
                Evidence::new(
                    "/proc/self/status",
                    format!("Cpus_allowed_list {allowed} of online {online} (/proc/self/status)"),
                )
                .with("allowed_cpus", allowed)
                .with("online_cpus", &online),
            );
            // Whatever the cpuset allows beyond the mask was narrowed by affinity.
            let cpuset = r
                .cgroup_cpus
                .as_ref()
                .map_or(online.clone(), |c| c.intersection(&online));
            by_cpuset = !online.difference(&cpuset).is_empty();
            by_affinity = !cpuset.difference(allowed).is_empty();
            if let Some(cpus) = &r.cgroup_cpus {
                evidence.push(
                    Evidence::new(
                        "cpuset.cpus.effective",
                        format!("the cpuset cgroup allows CPUs {cpus} (cpuset.cpus.effective)"),
                    )
                    .with("cgroup_cpus", cpus),
                );
            }
        }
    }
    (by_cpuset, by_affinity)
}

/// Who narrowed this process's CPUs: the cpuset cgroup (the container or
/// the service unit), or its own affinity mask (taskset, numactl,
/// sched_setaffinity, inherited from the parent). The remedies differ.
fn cgroup(topo: &Topology) -> Vec<Finding> {
    let r = &topo.restrictions;
    let mut evidence = Vec::new();
    let (mut by_cpuset, by_affinity) = cpu_limits(topo, &mut evidence);
    let all_nodes: numasleuth_parse::IdList = topo.nodes.iter().map(|n| n.id).collect();
    if let Some(mems) = &r.allowed_mems {
        if !all_nodes.difference(mems).is_empty() {
            // Mems_allowed comes from the cpuset alone; memory policies do not change it.
            by_cpuset = true;
            evidence.push(
                Evidence::new(
                    "/proc/self/status",
                    format!("Mems_allowed_list {mems} of nodes {all_nodes} (/proc/self/status)"),
                )
                .with("allowed_nodes", mems)
                .with("nodes", &all_nodes),
            );
        }
    }
    if evidence.is_empty() {
        return Vec::new();
    }
    if let (Some(version), Some(path)) = (r.cgroup_version, &r.cgroup_path) {
        evidence.push(
            Evidence::new("/proc/self/cgroup", format!("cpuset cgroup v{version}: {path}"))
                .with("cgroup_version", u32::from(version)),
        );
    }
    let mut remedy = String::from("Results from this session cover only the allowed CPUs and nodes. ");
    if by_affinity {
        remedy.push_str(
            "The CPU limit is this process's own affinity mask (taskset, numactl --cpunodebind or \
             sched_setaffinity, inherited from the shell that started it): run it from an unrestricted shell, or \
             widen the mask (`taskset -a -p -c <cpus> <pid>`). ",
        );
    }
    if by_cpuset {
        remedy.push_str(
            "The cpuset cgroup (container or service unit) limits it: widen the cpuset (e.g. `systemctl \
             set-property <unit> AllowedCPUs=… AllowedMemoryNodes=…`) or run outside the container.",
        );
    }
    let title = match (by_affinity, by_cpuset) {
        (true, false) => "this process is confined to part of the machine by its CPU affinity (taskset)",
        (false, true) => "this process is confined to part of the machine by its cpuset cgroup",
        _ => "this process is confined to part of the machine (cpuset cgroup and CPU affinity)",
    };
    vec![Finding {
        id: CheckId::CgroupRestricted.as_str(),
        severity: Severity::Info,
        confidence: None,
        title: title.into(),
        evidence,
        remedy: remedy.trim_end().to_string(),
        incident: None,
        explains: Vec::new(),
    }]
}
