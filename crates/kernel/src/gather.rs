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
use crate::root::Root;
use crate::sysfs::cpu::{self, CpuSysfs};
use crate::sysfs::node::{self, NodeSysfs};
use crate::sysfs::pci::{self, Device};

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
}

pub fn read_topology(root: &Root) -> Result<TopologyReadings, ReadError> {
    let meminfo = root
        .read_optional("proc/meminfo")?
        .map(|text| meminfo::parse(&text).map_err(|e| ReadError::malformed("proc/meminfo", e.0)))
        .transpose()?;
    Ok(TopologyReadings {
        nodes: node::read(root)?,
        cpus: cpu::read(root)?,
        meminfo,
        cpuinfo: cpuinfo::read(root)?,
        allowed: status::read_allowed(root, "self")?,
        cgroup: cgroup::read(root)?,
        devices: pci::read_devices(root)?,
    })
}

/// Host state for `doctor` and `irq`. Each part is read on its own and kept
/// as a result, so a missing or unreadable file skips the checks that need
/// it, with the reason, instead of aborting the run.
#[derive(Debug, Clone)]
pub struct HostReadings {
    pub settings: Result<Settings, ReadError>,
    pub zones: Result<Vec<Zone>, ReadError>,
    pub vmstat: Result<BTreeMap<String, u64>, ReadError>,
    pub interrupts: Result<Vec<InterruptLine>, ReadError>,
    /// IRQs of each PCI function, keyed by address.
    pub device_irqs: BTreeMap<String, Result<Vec<u32>, ReadError>>,
    pub irq_affinity: BTreeMap<u32, Result<IrqAffinity, ReadError>>,
    pub irqbalance_pids: Result<Vec<u32>, ReadError>,
}

pub fn read_host(root: &Root, devices: &[Device]) -> HostReadings {
    let mut device_irqs = BTreeMap::new();
    let mut irq_affinity = BTreeMap::new();
    for device in devices {
        let irqs = root
            .resolve(&format!("sys/bus/pci/devices/{}", device.pci.address))
            .and_then(|dir| pci::read_irqs(root, &dir));
        for irq in irqs.iter().flatten() {
            irq_affinity
                .entry(*irq)
                .or_insert_with(|| interrupts::read_affinity(root, *irq));
        }
        device_irqs.insert(device.pci.address.clone(), irqs);
    }
    HostReadings {
        settings: settings::read(root),
        zones: zoneinfo::read(root),
        vmstat: settings::read_vmstat(root),
        interrupts: interrupts::read(root),
        device_irqs,
        irq_affinity,
        irqbalance_pids: processes::find_by_comm(root, "irqbalance"),
    }
}
