//! Everything the topology model needs, read in one pass.
//!
//! Kept apart from the model so the model stays a pure function of these
//! readings, and so `snapshot` can run exactly this pass under a recording
//! root.

use std::collections::BTreeMap;

use crate::cgroup::{self, CpusetCgroup};
use crate::error::ReadError;
use crate::procfs::cpuinfo::{self, CpuInfo};
use crate::procfs::interrupts::{self, InterruptLine, IrqAffinity};
use crate::procfs::meminfo::{self, Meminfo};
use crate::procfs::processes;
use crate::procfs::settings::{self, Settings};
use crate::procfs::status::{self, Allowed};
use crate::procfs::zoneinfo::{self, Zone};
use crate::read;
use crate::root::Root;
use crate::sysfs::cpu::{self, CpuSysfs};
use crate::sysfs::node::{self, NodeSysfs};
use crate::sysfs::pci::{self, Device};
use crate::unread::{required, Gaps, Unread};

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
    fn not_a_machine(&self) -> Option<(&'static str, &'static str)> {
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

    /// Whether anything describes the machine at all.
    fn is_usable(&self) -> bool {
        self.nodes.as_ref().is_some_and(|n| !n.nodes.is_empty())
            || self.cpus.as_ref().is_some_and(|c| !c.cpus.is_empty())
            || self.cpuinfo.as_ref().is_some_and(|c| c.processors > 0)
            || self.meminfo.is_some()
    }
}

/// Reads what it can: an unusable file is noted in `unread` and the rest
/// goes on. A tree where nothing at all could be read, because of such
/// failures, is an error (the first failure). So is a tree that names no
/// CPU, or that has a node directory with no node in it: every machine has
/// a CPU and, with NUMA, a node, and reporting on such a tree would call an
/// empty machine healthy.
pub fn read_topology(root: &Root) -> Result<TopologyReadings, ReadError> {
    let mut gaps = Gaps::default();
    let meminfo = gaps.keep(required(
        "proc/meminfo",
        read::parsed(root, "proc/meminfo", meminfo::parse),
    ));
    let nodes = node::read(root, &mut gaps);
    let cpus = cpu::read(root, &mut gaps);
    let cpuinfo = gaps.keep(cpuinfo::read(root));
    let allowed = gaps.keep(required("proc/self/status", status::read_allowed(root, "proc/self")));
    let cgroup = gaps.keep(cgroup::read(root));
    let devices = pci::read_devices(root, &mut gaps);
    let first = gaps.first().cloned();
    let readings = TopologyReadings {
        nodes,
        cpus,
        meminfo,
        cpuinfo,
        allowed,
        cgroup,
        devices,
        unread: gaps.into_unread(),
    };
    match (readings.not_a_machine(), first) {
        (Some((path, what)), first) => Err(ReadError::Io {
            path: path.into(),
            message: format!(
                "{what}{}: this tree does not describe a machine, so there is nothing to report on",
                first.map_or(String::new(), |e| format!(" (first unreadable file: {e})"))
            ),
            errno: None,
        }),
        (None, Some(error)) if !readings.is_usable() => Err(error),
        (None, _) => Ok(readings),
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

pub fn read_host(root: &Root, topology: &TopologyReadings) -> HostReadings {
    let mut gaps = Gaps::default();
    let mut device_irqs = BTreeMap::new();
    let mut irq_affinity = BTreeMap::new();
    for device in &topology.devices {
        let irqs = root
            .resolve(&format!("sys/bus/pci/devices/{}", device.pci.address))
            .and_then(|dir| pci::read_irqs(root, &dir));
        let irqs = noted(&mut gaps, irqs);
        for irq in irqs.iter().flatten() {
            if !irq_affinity.contains_key(irq) {
                let affinity = interrupts::read_affinity(root, *irq, &mut gaps);
                irq_affinity.insert(*irq, noted(&mut gaps, affinity));
            }
        }
        device_irqs.insert(device.pci.address.clone(), irqs);
    }
    let settings = settings::read(root, &mut gaps);
    for (relative, value) in [
        ("proc/sys/vm/min_free_kbytes", settings.min_free_kbytes.is_some()),
        ("proc/cmdline", settings.kernel_cmdline.is_some()),
    ] {
        // One that is there but unreadable was noted by `settings::read`.
        if !value && !root.exists(relative) {
            let _ = noted(&mut gaps, required(relative, Ok(None::<()>)));
        }
    }
    let zones = noted(&mut gaps, required("proc/zoneinfo", zoneinfo::read(root)));
    let vmstat = noted(&mut gaps, required("proc/vmstat", settings::read_vmstat(root)));
    let interrupts = noted(&mut gaps, required("proc/interrupts", interrupts::read(root)));
    let irqbalance_pids = processes::find_by_comm(root, "irqbalance", &mut gaps);
    let irqbalance_pids = noted(&mut gaps, irqbalance_pids);
    let mut unread = topology.unread.clone();
    unread.extend(gaps.into_unread());
    HostReadings {
        base_page_bytes: crate::pages::base_page_bytes(root),
        settings,
        zones,
        vmstat,
        interrupts,
        device_irqs,
        irq_affinity,
        irqbalance_pids,
        unread,
    }
}

/// Keeps the result for the check that needs it, and notes a failure that
/// is not absence.
fn noted<T>(gaps: &mut Gaps, result: Result<T, ReadError>) -> Result<T, ReadError> {
    if let Err(e) = &result {
        gaps.note(e);
    }
    result
}

/// The per-node memory signals, read once for every command that samples
/// them (memwatch, top, serve, probe-latency).
pub use crate::memory_sample::{memory_sample, MemorySample, Parts as MemoryParts};
