//! The machine as numasleuth understands it: nodes, CPUs, caches, devices
//! and the limits this process runs under.
//!
//! [`Topology::build`] is a pure function of the kernel readings, so the same
//! readings from a live system, a fixture or a snapshot give the same model.

// A pure crate: no unsafe code, so no memory or system effect hides here.
#![forbid(unsafe_code)]

mod build;
mod caches;
mod facts;
pub mod hex;
pub mod hotpages;
pub mod lab;
pub mod latency;
pub mod mapping_kind;
pub mod memory_signals;
pub mod migrations;
pub mod perf;
pub mod process;
mod process_build;
pub mod readers;
pub mod runs;
pub mod stop;
pub mod symbol;
pub mod top;
mod topology_doc;
pub mod units;

use numasleuth_parse::sysfs::node::AccessClass;
use numasleuth_parse::IdList;
use serde::Serialize;

pub use build::ModelError;
pub use caches::{CacheDomain, CacheKind};
/// A device's kind is a fact of sysfs, typed once where it is parsed.
pub use numasleuth_parse::sysfs::pci::DeviceKind;

/// `Default` (`Sysfs`) and the `Default`s below let a test or a synthetic
/// machine name only the fields it sets.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum NumaSource {
    /// The kernel exports `/sys/devices/system/node`.
    #[default]
    Sysfs,
    /// No node sysfs (kernel without NUMA, or `numa=off`): one implicit
    /// node 0 holds every CPU and all memory.
    Implicit,
}

/// Serializes as `topo --json` writes a node (`topology_doc`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Node {
    pub id: u32,
    pub cpus: IdList,
    pub memory_total_bytes: Option<u64>,
    pub memory_free_bytes: Option<u64>,
    pub hugetlb_bytes: Option<u64>,
    /// Distance to each node of [`Topology::nodes`], in that order; `None`
    /// where the kernel's table has no entry.
    pub distances: Vec<Option<u32>>,
    /// From `has_memory`, when the kernel says.
    pub has_memory: Option<bool>,
    pub access: Vec<AccessClass>,
}

impl Node {
    pub fn has_cpus(&self) -> bool {
        !self.cpus.is_empty()
    }
}

/// Serialized as `topo --json` writes a CPU, in this field order.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Cpu {
    pub id: u32,
    pub node: Option<u32>,
    pub package: Option<u32>,
    pub die: Option<u32>,
    pub cluster: Option<u32>,
    pub core: Option<u32>,
    pub online: bool,
    pub thread_siblings: Option<IdList>,
}

/// Serialized as `topo --json` writes a device: PCI ids in hex, as lspci
/// shows them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Device {
    pub kind: DeviceKind,
    pub name: String,
    pub pci: String,
    pub node: Option<u32>,
    pub local_cpus: Option<IdList>,
    #[serde(serialize_with = "topology_doc::pci_class")]
    pub class: Option<u32>,
    #[serde(serialize_with = "topology_doc::pci_id")]
    pub vendor: Option<u16>,
    #[serde(serialize_with = "topology_doc::pci_id")]
    pub device: Option<u16>,
}

/// Where this process may run and allocate, and why.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Restrictions {
    pub allowed_cpus: Option<IdList>,
    pub allowed_mems: Option<IdList>,
    pub cgroup_version: Option<u8>,
    pub cgroup_path: Option<String>,
    pub cgroup_cpus: Option<IdList>,
    pub cgroup_mems: Option<IdList>,
}

/// Serializes as the body of `topo --json` (`topology_doc`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Topology {
    pub numa: NumaSource,
    pub nodes: Vec<Node>,
    pub cpus: Vec<Cpu>,
    pub caches: Vec<CacheDomain>,
    pub devices: Vec<Device>,
    pub restrictions: Restrictions,
    pub cpu_model: Option<String>,
    pub cpu_vendor: Option<String>,
    pub memory_total_bytes: Option<u64>,
}

impl Topology {
    /// What the CPU is called in a report: its model name, else its vendor
    /// (an Arm machine's cpuinfo names only the implementer, `HiSilicon`).
    /// Every report that names the CPU asks this, so they agree.
    pub fn cpu_name(&self) -> Option<&str> {
        self.cpu_model.as_deref().or(self.cpu_vendor.as_deref())
    }

    pub fn node(&self, id: u32) -> Option<&Node> {
        self.nodes.iter().find(|n| n.id == id)
    }

    pub fn offline_cpus(&self) -> IdList {
        self.cpus.iter().filter(|c| !c.online).map(|c| c.id).collect()
    }

    pub fn online_cpus(&self) -> IdList {
        self.cpus.iter().filter(|c| c.online).map(|c| c.id).collect()
    }

    /// Distinct values of a per-CPU id, among CPUs that report it.
    pub fn distinct<F: Fn(&Cpu) -> Option<T>, T: Ord>(&self, key: F) -> usize {
        let mut values: Vec<T> = self.cpus.iter().filter_map(key).collect();
        values.sort();
        values.dedup();
        values.len()
    }
}
