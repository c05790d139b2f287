//! What `lstopo` would show, derived from our model. numasleuth and hwloc
//! differ on purpose in what they show; this module is where each of those
//! differences is written down as a rule with its reason, so that the
//! comparison checks everything else exactly.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::Path;

use numasleuth_model::{Node, Topology};

use super::options::Knobs;

/// hwloc policy inputs that are not part of numasleuth's model: files only
/// hwloc reads, used to decide what it hides.
#[derive(Debug, Default)]
pub(crate) struct HwlocFacts {
    /// `Architecture:` of `/proc/hwloc-nofile-info`, which hwloc's captures
    /// carry instead of `uname`.
    architecture: Option<String>,
    /// Nodes that `/proc/driver/nvidia/gpus/*/numa_status` names as GPU
    /// memory.
    nvidia_gpu_nodes: BTreeSet<u32>,
}

impl HwlocFacts {
    pub(crate) fn read(root: &Path) -> HwlocFacts {
        let architecture = fs::read_to_string(root.join("proc/hwloc-nofile-info"))
            .ok()
            .and_then(|text| {
                text.lines()
                    .find_map(|l| l.strip_prefix("Architecture:").map(|a| a.trim().to_string()))
            });
        let mut nvidia_gpu_nodes = BTreeSet::new();
        if let Ok(gpus) = fs::read_dir(root.join("proc/driver/nvidia/gpus")) {
            for gpu in gpus.flatten() {
                let Ok(bytes) = fs::read(gpu.path().join("numa_status")) else {
                    continue;
                };
                let text = String::from_utf8_lossy(&bytes);
                let node: Option<u32> = text
                    .lines()
                    .find_map(|l| l.trim_matches('\0').strip_prefix("Node:"))
                    .and_then(|v| v.trim().parse().ok());
                nvidia_gpu_nodes.extend(node);
            }
        }
        HwlocFacts {
            architecture,
            nvidia_gpu_nodes,
        }
    }

    fn is_power(&self) -> bool {
        self.architecture
            .as_deref()
            .is_some_and(|a| a.starts_with("ppc") || a.starts_with("power"))
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Locality {
    /// The PUs under the node's parent.
    Cpus(BTreeSet<u32>),
    /// A CPU-less node for which neither HMAT nor the SLIT names nearer
    /// CPUs. hwloc attaches it at the top, under the Machine (every PU), or,
    /// when it then groups nodes by distance, in a Group of its own with no
    /// PU (the 17th node of 128ia64-17n4s2c). Either way it is local to no
    /// CPU in particular, which is what our empty `Node::cpus` says.
    Unplaced,
}

#[derive(Debug, Clone)]
pub(crate) struct ExpectedNode {
    pub(crate) cpus: Locality,
    /// MemTotal, as hwloc prints it in `local=`.
    pub(crate) memory_bytes: Option<u64>,
    /// The node's hugetlb pool, when it has one; included in `memory_bytes`.
    pub(crate) hugetlb_bytes: Option<u64>,
}

#[derive(Debug, Default)]
pub(crate) struct HwlocView {
    pub(crate) nodes: BTreeMap<u32, ExpectedNode>,
    /// Our nodes lstopo does not show, and why.
    pub(crate) hidden: BTreeMap<u32, String>,
    /// The PUs lstopo shows.
    pub(crate) pus: BTreeSet<u32>,
    pub(crate) notes: Vec<String>,
}

/// Our model, seen the way `lstopo` shows a machine. Every rule here is a
/// place where numasleuth deliberately shows something else.
pub(crate) fn hwloc_view(
    topology: &Topology,
    knobs: &Knobs,
    facts: &HwlocFacts,
    hugetlb: &BTreeMap<u32, u64>,
) -> HwlocView {
    let mut view = HwlocView::default();
    let set = |ids: &[u32]| ids.iter().copied().collect::<BTreeSet<u32>>();
    let cgroup_cpus = topology.restrictions.cgroup_cpus.as_ref().map(|l| set(l.ids()));
    let cgroup_mems = topology.restrictions.cgroup_mems.as_ref().map(|l| set(l.ids()));
    let restrict = !knobs.whole_system;

    // PUs. hwloc leaves offline CPUs out of the tree; numasleuth lists them
    // (`Cpu::online == false`) because "CPU 3 exists but is offline" is
    // exactly what a user debugging placement needs to see. hwloc also hides
    // CPUs outside the cpuset cgroup unless told otherwise (`HWLOC_ALLOW=all`,
    // `--whole-system`); numasleuth always shows the whole machine and
    // reports the cgroup's sets in `Restrictions`. hwloc takes the cgroup's
    // own `cpuset.cpus`/`cpus` file, not `/proc/self/status`, so we restrict by
    // `Restrictions::cgroup_cpus`, the same file.
    let online: BTreeSet<u32> = topology.cpus.iter().filter(|c| c.online).map(|c| c.id).collect();
    view.pus = match (&cgroup_cpus, restrict) {
        (Some(allowed), true) => online.intersection(allowed).copied().collect(),
        _ => online.clone(),
    };
    let offline = topology.cpus.len() - online.len();
    if offline > 0 {
        view.notes
            .push(format!("{offline} offline CPU(s) left out, as hwloc does"));
    }
    if view.pus.len() < online.len() {
        view.notes.push(format!(
            "{} online CPU(s) outside the cgroup left out, as hwloc does by default",
            online.len() - view.pus.len()
        ));
    }

    // Nodes hwloc keeps at discovery, in OS-index order as it reads them.
    let mut kept: Vec<&Node> = Vec::new();
    let mut claimed: BTreeSet<u32> = BTreeSet::new();
    for node in &topology.nodes {
        let cpus = set(node.cpus.ids());
        // Memory of an NVIDIA GPU (POWER9 + V100 NVLink): hwloc hides it by
        // default on POWER so that interleaved allocations stay off GPU
        // memory. numasleuth shows every node the kernel has; which memory to
        // interleave over is the user's decision, made with the full list.
        // (Where hwloc keeps such a node it files it under the GPU's PCI
        // locality, which no capture with a .console exercises yet.)
        let keep_gpu = knobs.keep_gpu_nodes.unwrap_or(!facts.is_power());
        if facts.nvidia_gpu_nodes.contains(&node.id) && !keep_gpu {
            view.hidden
                .insert(node.id, "NVIDIA GPU memory, hidden by hwloc on POWER".into());
            continue;
        }
        // Buggy firmware that puts one CPU in several nodes: hwloc keeps the
        // first node that claims it and drops the later ones. numasleuth
        // shows each node's CPU list exactly as the kernel gives it, so the
        // firmware bug is visible rather than papered over.
        if !knobs.allow_overlapping_nodes && !cpus.is_disjoint(&claimed) {
            view.hidden
                .insert(node.id, "its CPUs overlap an earlier node's, dropped by hwloc".into());
            continue;
        }
        claimed.extend(&cpus);
        kept.push(node);
    }

    // Where hwloc attaches each node. A node with CPUs goes with its CPUs.
    // A CPU-less node (HBM, CXL, NVDIMM, or a far memory board) has no CPUs
    // for the kernel, and numasleuth reports exactly that: `Node::cpus` is
    // empty and the HMAT initiators and SLIT are given separately. hwloc
    // instead files the memory under the CPUs it is best used from: its
    // HMAT initiators (`access1`, else `access0`), else the nodes strictly
    // nearest in the SLIT, else nowhere in particular. We apply the same
    // rules to our own initiators and distances, so this still checks them.
    let mut locality: BTreeMap<u32, BTreeSet<u32>> = kept.iter().map(|n| (n.id, set(n.cpus.ids()))).collect();
    let with_cpus: Vec<&Node> = kept.iter().copied().filter(|n| n.has_cpus()).collect();
    let without_cpus: Vec<&Node> = kept.iter().copied().filter(|n| !n.has_cpus()).collect();
    for node in &with_cpus {
        add_initiators(node, &mut locality);
    }
    for node in &without_cpus {
        let how = if add_initiators(node, &mut locality) && !locality[&node.id].is_empty() {
            "its HMAT initiators".to_string()
        } else if let Some(nearest) = nearest_by_distance(topology, node, &kept) {
            let cpus: BTreeSet<u32> = nearest.iter().flat_map(|id| locality[id].clone()).collect();
            locality.insert(node.id, cpus);
            format!("its nearest nodes in the SLIT ({nearest:?})")
        } else {
            "nothing: no initiator and no nearer node, so it is local to no CPU in particular".to_string()
        };
        view.notes.push(format!(
            "CPU-less node {} compared at hwloc's locality, from {how}",
            node.id
        ));
    }

    for node in kept {
        // Disallowed memory: hidden by hwloc by default, reported by
        // numasleuth with `Restrictions::cgroup_mems` (see the PUs above).
        if let (Some(allowed), true) = (&cgroup_mems, restrict) {
            if !allowed.contains(&node.id) {
                view.hidden
                    .insert(node.id, "outside the cgroup's mems, hidden by hwloc by default".into());
                continue;
            }
        }
        let local = &locality[&node.id];
        let cpus = if local.is_empty() {
            Locality::Unplaced
        } else {
            Locality::Cpus(local.intersection(&view.pus).copied().collect())
        };
        // Hugepages. hwloc's `local=` is the node's MemTotal with the hugetlb
        // pool still in it: 32intel64-2p8co2t+8ve reserves 2048 x 2 MiB pages
        // on each node and prints local=46GiB for node 0, its MemTotal of
        // 47925628 kB, where MemTotal less the pool would print 42GiB. Our
        // `memory_total_bytes` is MemTotal too, so we compare it as is and
        // subtract nothing; `compare` says so if hwloc ever disagrees.
        let hugetlb_bytes = hugetlb.get(&node.id).copied();
        if let Some(bytes) = hugetlb_bytes {
            view.notes.push(format!(
                "node {} has {bytes} bytes of hugetlb pages, counted in local memory as hwloc does",
                node.id
            ));
        }
        view.nodes.insert(
            node.id,
            ExpectedNode {
                cpus,
                memory_bytes: node.memory_total_bytes,
                hugetlb_bytes,
            },
        );
    }
    for (id, why) in &view.hidden {
        view.notes.push(format!("node {id} left out: {why}"));
    }
    view
}

/// ORs a node's HMAT initiators' CPUs into its locality, as hwloc does;
/// false when the node has no access class at all.
fn add_initiators(node: &Node, locality: &mut BTreeMap<u32, BTreeSet<u32>>) -> bool {
    // access1 holds the best CPU initiators; access0 may be a generic
    // initiator (a GPU or accelerator) that has no CPUs.
    let Some(class) = node
        .access
        .iter()
        .find(|a| a.class == 1)
        .or_else(|| node.access.iter().find(|a| a.class == 0))
    else {
        return false;
    };
    let mut cpus = locality[&node.id].clone();
    for initiator in class.initiators.iter().filter(|&i| i != node.id) {
        if let Some(theirs) = locality.get(&initiator) {
            cpus.extend(theirs);
        }
    }
    locality.insert(node.id, cpus);
    true
}

/// The kept nodes strictly nearest to a CPU-less node, when the SLIT singles
/// some out: not when every other node is as far, and not when another node
/// is as near as the node is to itself.
fn nearest_by_distance(topology: &Topology, node: &Node, kept: &[&Node]) -> Option<Vec<u32>> {
    if topology.nodes.len() < 2 || topology.nodes.iter().any(|n| n.distances.iter().any(Option::is_none)) {
        return None;
    }
    let column = |id: u32| topology.nodes.iter().position(|n| n.id == id);
    let own = node.distances[column(node.id)?]?;
    let others: Vec<(u32, u32)> = kept
        .iter()
        .filter(|other| other.id != node.id)
        .filter_map(|other| Some((other.id, node.distances[column(other.id)?]?)))
        .collect();
    let min = others.iter().map(|(_, d)| *d).min()?;
    let nearest: Vec<u32> = others.iter().filter(|(_, d)| *d == min).map(|(id, _)| *id).collect();
    if min <= own || nearest.len() == topology.nodes.len() - 1 {
        return None;
    }
    Some(nearest)
}
