//! Everything the topology model needs, read in one pass.
//!
//! Kept apart from the model so the model stays a pure function of these
//! readings, and so `snapshot` can run exactly this pass under a recording
//! root.

use crate::cgroup::{self, CpusetCgroup};
use crate::error::ReadError;
use crate::procfs::cpuinfo::{self, CpuInfo};
use crate::procfs::meminfo::{self, Meminfo};
use crate::procfs::status::{self, Allowed};
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
