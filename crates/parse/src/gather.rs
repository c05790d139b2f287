//! The readings the topology model and doctor are built from, as
//! `numasleuth_kernel::gather` reads them in one pass (and `snapshot` under
//! a recording root).

use std::collections::BTreeMap;

use crate::cgroup::CpusetCgroup;
use crate::error::ReadError;
use crate::procfs::cpuinfo::CpuInfo;
use crate::procfs::interrupts::{InterruptLine, IrqAffinity};
use crate::procfs::meminfo::Meminfo;
use crate::procfs::settings::Settings;
use crate::procfs::status::Allowed;
use crate::procfs::zoneinfo::Zone;
use crate::sysfs::cpu::CpuSysfs;
use crate::sysfs::node::NodeSysfs;
use crate::sysfs::pci::Device;
use crate::unread::Unread;

#[derive(Debug, Clone)]
pub struct TopologyReadings {
    /// `None` on a kernel without NUMA (no node sysfs).
    pub nodes: Option<NodeSysfs>,
    pub cpus: Option<CpuSysfs>,
    pub meminfo: Option<Meminfo>,
    pub cpuinfo: Option<CpuInfo>,
    pub allowed: Option<Allowed>,
    pub cgroup: Option<CpusetCgroup>,
    pub devices: Vec<Device>,
    /// Files that exist but could not be used; each was read as absent.
    pub unread: Vec<Unread>,
}

impl TopologyReadings {
    /// Why the readings cannot be a machine, if they cannot: the path a
    /// person would look at, and what is missing there.
    pub fn not_a_machine(&self) -> Option<(&'static str, &'static str)> {
        let listed = |list: &Option<crate::IdList>| list.as_ref().is_some_and(|l| !l.is_empty());
        let cpus_named = self.cpus.as_ref().is_some_and(|c| {
            !c.cpus.is_empty()
                || [&c.states.online, &c.states.present, &c.states.possible]
                    .into_iter()
                    .any(listed)
        }) || self
            .nodes
            .as_ref()
            .is_some_and(|n| n.nodes.iter().any(|node| !node.cpus.is_empty()))
            || self.cpuinfo.as_ref().is_some_and(|c| c.processors > 0);
        if !cpus_named {
            return Some((
                "/sys/devices/system/cpu",
                "no CPU can be read here, nor from /sys/devices/system/node or /proc/cpuinfo",
            ));
        }
        if self.nodes.as_ref().is_some_and(|n| n.nodes.is_empty()) {
            return Some((
                "/sys/devices/system/node",
                "the node directory holds no node that can be read",
            ));
        }
        None
    }

    /// The nodes `/proc/zoneinfo` lists zones on (`zone_nodes`) that the
    /// node directory does not describe, as one [`Unread`]: a tree with
    /// `sys/` removed or emptied otherwise reads as a healthy one-node
    /// machine. Noted as unread, it makes the checks over nodes say they
    /// are partial, so `--fail-on` cannot pass on them.
    pub fn nodes_missing(&self, zone_nodes: &[u32]) -> Option<Unread> {
        let listed: Vec<u32> = self
            .nodes
            .as_ref()
            .map(|n| n.nodes.iter().map(|node| node.id).collect())
            .unwrap_or_default();
        let mut unlisted: Vec<u32> = zone_nodes.iter().copied().filter(|n| !listed.contains(n)).collect();
        unlisted.sort_unstable();
        unlisted.dedup();
        // A kernel without NUMA has no node directory and one node, 0, in
        // zoneinfo: that is its answer, not a gap.
        if unlisted.is_empty() || (self.nodes.is_none() && unlisted == [0]) {
            return None;
        }
        Some(Unread::new(
            crate::error::display_path(crate::sysfs::node::NODE_DIR),
            format!(
                "holds no directory for node(s) {}, though /proc/zoneinfo lists zones on them: the tree is \
                 incomplete, so its node count and per-node checks are not the machine's",
                crate::IdList::new(unlisted)
            ),
        ))
    }

    /// Whether anything describes the machine at all.
    pub fn is_usable(&self) -> bool {
        self.nodes.as_ref().is_some_and(|n| !n.nodes.is_empty())
            || self.cpus.as_ref().is_some_and(|c| !c.cpus.is_empty())
            || self.cpuinfo.as_ref().is_some_and(|c| c.processors > 0)
            || self.meminfo.is_some()
    }
}

/// Host state for `doctor` and `irq`. Each part is read on its own, so a
/// missing or unreadable file skips or limits only the checks that need
/// it, with the reason, instead of aborting the run.
#[derive(Debug, Clone)]
pub struct HostReadings {
    /// Each knob on its own; one that could not be read is `None` and
    /// listed in `unread`.
    pub settings: Settings,
    pub zones: Result<Vec<Zone>, ReadError>,
    pub vmstat: Result<BTreeMap<String, u64>, ReadError>,
    pub interrupts: Result<Vec<InterruptLine>, ReadError>,
    /// IRQs of each PCI function, keyed by address.
    pub device_irqs: BTreeMap<String, Result<Vec<u32>, ReadError>>,
    pub irq_affinity: BTreeMap<u32, Result<IrqAffinity, ReadError>>,
    pub irqbalance_pids: Result<Vec<u32>, ReadError>,
    /// The base page size the zone counts are in (`pages::base_page_bytes`):
    /// unknown for a tree that does not record it, so figures stay in pages
    /// there.
    pub base_page_bytes: Option<u64>,
    /// Every file behind these readings, and behind the topology they were
    /// read for, that exists but could not be used. The analysis matches
    /// them to the checks that read them.
    pub unread: Vec<Unread>,
}

/// The per-node memory signals, read once for every command that samples
/// them (memwatch, top, serve, probe-latency).
pub use crate::memory_sample::{MemorySample, Parts as MemoryParts};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sysfs::node::{NodeFiles, NodeStates};

    fn readings(node_ids: Option<&[u32]>) -> TopologyReadings {
        let node = |id| NodeFiles {
            id,
            cpus: crate::IdList::new(vec![id]),
            meminfo: Meminfo::default(),
            distances: None,
            numastat: None,
            access: Vec::new(),
        };
        TopologyReadings {
            nodes: node_ids.map(|ids| NodeSysfs {
                states: NodeStates::default(),
                nodes: ids.iter().copied().map(node).collect(),
            }),
            cpus: None,
            meminfo: None,
            cpuinfo: None,
            allowed: None,
            cgroup: None,
            devices: Vec::new(),
            unread: Vec::new(),
        }
    }

    #[test]
    fn zones_on_nodes_the_node_directory_lacks_are_a_gap() {
        // A kernel without NUMA: no node directory, zones on node 0 only.
        assert_eq!(readings(None).nodes_missing(&[0, 0, 0]), None);
        assert_eq!(readings(Some(&[0, 1])).nodes_missing(&[0, 0, 1, 1]), None);
        assert_eq!(readings(None).nodes_missing(&[]), None);
        // sys/ removed from a four-node capture.
        let gap = readings(None).nodes_missing(&[0, 0, 1, 2, 3, 3]).unwrap();
        assert_eq!(gap.path, "/sys/devices/system/node");
        assert!(
            gap.why.starts_with("holds no directory for node(s) 0-3,"),
            "{}",
            gap.why
        );
        // Node 3's directory missing from an otherwise whole tree.
        let gap = readings(Some(&[0, 1, 2])).nodes_missing(&[0, 1, 2, 3]).unwrap();
        assert!(gap.why.starts_with("holds no directory for node(s) 3,"), "{}", gap.why);
        // No node directory but zones on node 1: not a NUMA-less kernel.
        assert!(readings(None).nodes_missing(&[1]).is_some());
    }
}
