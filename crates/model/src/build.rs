//! Turning raw readings into a [`Topology`]; pure, so fixtures test it.

use numasleuth_parse::gather::TopologyReadings;
use numasleuth_parse::sysfs::cpu::CpuFiles;
use numasleuth_parse::sysfs::node::{NodeStates, NodeSysfs};
use thiserror::Error;

use crate::caches::cache_domains;
use crate::{Cpu, Device, Node, NumaSource, Restrictions, Topology};

#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum ModelError {
    #[error(
        "/sys/devices/system/node/node{node}/distance: malformed: {entries} entries but {nodes} nodes (truncated file?)"
    )]
    DistanceRowLength { node: u32, entries: usize, nodes: usize },
}

impl Topology {
    /// The model, refusing readings that contradict themselves (a distance
    /// row that fits no node list).
    pub fn build(readings: &TopologyReadings) -> Result<Topology, ModelError> {
        let (topology, problems) = Topology::build_degraded(readings);
        match problems.into_iter().next() {
            Some(problem) => Err(problem),
            None => Ok(topology),
        }
    }

    /// The model from whatever the readings hold: a fact that contradicts
    /// the others is dropped (read as unknown) and returned beside the
    /// model, so a command can show the rest and say what it left out.
    pub fn build_degraded(readings: &TopologyReadings) -> (Topology, Vec<ModelError>) {
        let mut problems = Vec::new();
        let cpu_files: Vec<CpuFiles> = match &readings.cpus {
            Some(sysfs) => sysfs.cpus.clone(),
            // No CPU sysfs: fall back on cpuinfo's processor count.
            None => (0..readings.cpuinfo.as_ref().map_or(0, |i| i.processors as u32))
                .map(|id| CpuFiles {
                    id,
                    ..CpuFiles::default()
                })
                .collect(),
        };
        let online_list = readings.cpus.as_ref().and_then(|c| c.states.online.clone());
        let (numa, nodes) = match &readings.nodes {
            Some(sysfs) => (
                NumaSource::Sysfs,
                sysfs_nodes(
                    sysfs,
                    &cpu_files,
                    readings.meminfo.as_ref().and_then(|m| m.get("Hugepagesize")),
                    &mut problems,
                ),
            ),
            None => (NumaSource::Implicit, vec![implicit_node(readings, &cpu_files)]),
        };
        let cpus = cpu_files
            .iter()
            .map(|f| Cpu {
                id: f.id,
                node: nodes.iter().find(|n| n.cpus.contains(f.id)).map(|n| n.id).or(f.node),
                online: match &online_list {
                    Some(list) => list.contains(f.id),
                    None => f.online.unwrap_or(true),
                },
                package: f.package,
                die: f.die,
                cluster: f.cluster,
                core: f.core,
                thread_siblings: f.thread_siblings.clone(),
            })
            .collect();
        let cgroup = readings.cgroup.as_ref();
        let topology = Topology {
            numa,
            nodes,
            cpus,
            caches: cache_domains(&cpu_files),
            devices: readings
                .devices
                .iter()
                .map(|d| Device {
                    kind: d.kind,
                    name: d.name.clone(),
                    pci: d.pci.address.clone(),
                    node: d.pci.node,
                    local_cpus: d.pci.local_cpus.clone(),
                    class: d.pci.class,
                    vendor: d.pci.vendor,
                    device: d.pci.device,
                })
                .collect(),
            restrictions: Restrictions {
                allowed_cpus: readings.allowed.as_ref().and_then(|a| a.cpus.clone()),
                allowed_mems: readings.allowed.as_ref().and_then(|a| a.mems.clone()),
                cgroup_version: cgroup.map(|c| match c.version {
                    numasleuth_parse::cgroup::CgroupVersion::V1 => 1,
                    numasleuth_parse::cgroup::CgroupVersion::V2 => 2,
                }),
                cgroup_path: cgroup.map(|c| c.path.clone()),
                cgroup_cpus: cgroup.and_then(|c| c.effective_cpus.clone()),
                cgroup_mems: cgroup.and_then(|c| c.effective_mems.clone()),
            },
            cpu_model: readings.cpuinfo.as_ref().and_then(|i| i.model_name.clone()),
            cpu_vendor: readings.cpuinfo.as_ref().and_then(|i| i.vendor.clone()),
            memory_total_bytes: readings.meminfo.as_ref().and_then(|m| m.total_bytes()),
        };
        (topology, problems)
    }
}

/// `page_size_bytes` is the default huge page size, which is what a node's
/// `HugePages_Total` counts. A distance row that fits no node list is read
/// as unknown and reported in `problems`.
fn sysfs_nodes(
    sysfs: &NodeSysfs,
    cpu_files: &[CpuFiles],
    page_size_bytes: Option<u64>,
    problems: &mut Vec<ModelError>,
) -> Vec<Node> {
    let dir_ids: Vec<u32> = sysfs.nodes.iter().map(|n| n.id).collect();
    sysfs
        .nodes
        .iter()
        .map(|files| {
            let unknown = vec![None; dir_ids.len()];
            let distances = match &files.distances {
                None => unknown,
                // The kernel prints one entry per online node, in id order.
                Some(row) => match column_ids(row.len(), &sysfs.states, &dir_ids) {
                    Some(columns) => dir_ids
                        .iter()
                        .map(|id| columns.iter().position(|c| c == id).map(|i| row[i]))
                        .collect(),
                    None => {
                        problems.push(ModelError::DistanceRowLength {
                            node: files.id,
                            entries: row.len(),
                            nodes: dir_ids.len(),
                        });
                        unknown
                    }
                },
            };
            // A CPU whose directory links to this node belongs to it, even
            // when the node's own cpulist could not be read.
            let cpus = if files.cpus.is_empty() {
                cpu_files
                    .iter()
                    .filter(|c| c.node == Some(files.id))
                    .map(|c| c.id)
                    .collect()
            } else {
                files.cpus.clone()
            };
            Node {
                id: files.id,
                cpus,
                memory_total_bytes: files.meminfo.total_bytes(),
                memory_free_bytes: files.meminfo.free_bytes(),
                hugetlb_bytes: files
                    .meminfo
                    .get("HugePages_Total")
                    .zip(page_size_bytes)
                    .map(|(pages, size)| pages.saturating_mul(size)),
                distances,
                has_memory: sysfs.states.has_memory.as_ref().map(|m| m.contains(files.id)),
                access: files.access.clone(),
            }
        })
        .collect()
}

/// Which node each entry of a distance row is about. The kernel prints one
/// per online node; some kernels printed one per possible node, and a
/// capture may lack the masks, so try each list whose length fits.
fn column_ids(entries: usize, states: &NodeStates, dir_ids: &[u32]) -> Option<Vec<u32>> {
    [states.online.as_ref(), states.possible.as_ref()]
        .into_iter()
        .flatten()
        .find(|list| list.len() == entries)
        .map(|list| list.ids().to_vec())
        .or_else(|| (dir_ids.len() == entries).then(|| dir_ids.to_vec()))
}

fn implicit_node(readings: &TopologyReadings, cpus: &[CpuFiles]) -> Node {
    let meminfo = readings.meminfo.as_ref();
    Node {
        id: 0,
        cpus: cpus.iter().map(|c| c.id).collect(),
        memory_total_bytes: meminfo.and_then(|m| m.total_bytes()),
        memory_free_bytes: meminfo.and_then(|m| m.free_bytes()),
        hugetlb_bytes: meminfo.and_then(|m| m.hugetlb_bytes()),
        // Without a SLIT there is no distance to report, not even to itself.
        distances: vec![None],
        has_memory: None,
        access: Vec::new(),
    }
}
