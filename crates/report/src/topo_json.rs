//! `topo --json`, schema `numasleuth.topo/1`.
//!
//! The names below are a contract: scripts parse them. Fields may be added;
//! none may be renamed or change meaning without a new schema version.

use numasleuth_model::{CacheDomain, Cpu, Device, DeviceKind, Node, NumaSource, Topology};
use numasleuth_parse::IdList;
use serde::Serialize;

pub const SCHEMA: &str = "numasleuth.topo/1";

#[derive(Debug, Serialize)]
pub struct TopoJson {
    pub schema: &'static str,
    /// Where the data came from (set by `topo`; inside `doctor --json` the
    /// document's own `provenance` says it).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub provenance: Option<crate::provenance::Provenance>,
    /// `sysfs`, or `implicit` when the kernel has no node sysfs.
    pub numa_source: NumaSource,
    pub cpu_model: Option<String>,
    pub cpu_vendor: Option<String>,
    pub memory_total_bytes: Option<u64>,
    pub nodes: Vec<NodeJson>,
    pub cpus: Vec<CpuJson>,
    pub caches: Vec<CacheJson>,
    pub devices: Vec<DeviceJson>,
    pub restrictions: RestrictionsJson,
    pub warnings: Vec<String>,
}

#[derive(Debug, Serialize)]
pub struct NodeJson {
    pub id: u32,
    pub cpus: IdList,
    pub has_cpus: bool,
    pub memory_total_bytes: Option<u64>,
    pub memory_free_bytes: Option<u64>,
    /// In the order of `nodes`; `null` where the kernel gave no value.
    pub distances: Vec<Option<u32>>,
    pub has_memory: Option<bool>,
    /// HMAT performance per access class, where the firmware provides it.
    pub hmat: Vec<HmatJson>,
}

#[derive(Debug, Serialize)]
pub struct HmatJson {
    pub access_class: u32,
    pub initiator_nodes: IdList,
    pub read_latency_ns: Option<u64>,
    pub write_latency_ns: Option<u64>,
    pub read_bandwidth_mb_per_sec: Option<u64>,
    pub write_bandwidth_mb_per_sec: Option<u64>,
}

#[derive(Debug, Serialize)]
pub struct CpuJson {
    pub id: u32,
    pub node: Option<u32>,
    pub package: Option<u32>,
    pub die: Option<u32>,
    pub cluster: Option<u32>,
    pub core: Option<u32>,
    pub online: bool,
    pub thread_siblings: Option<IdList>,
}

#[derive(Debug, Serialize)]
pub struct CacheJson {
    pub level: u32,
    #[serde(rename = "type")]
    pub kind: String,
    pub size_bytes: Option<u64>,
    pub line_size_bytes: Option<u32>,
    pub cpus: IdList,
}

#[derive(Debug, Serialize)]
pub struct DeviceJson {
    pub kind: DeviceKind,
    pub name: String,
    pub pci: String,
    pub node: Option<u32>,
    pub local_cpus: Option<IdList>,
    pub class: Option<String>,
    pub vendor: Option<String>,
    pub device: Option<String>,
}

#[derive(Debug, Serialize)]
pub struct RestrictionsJson {
    pub allowed_cpus: Option<IdList>,
    pub allowed_mems: Option<IdList>,
    pub offline_cpus: IdList,
    pub cgroup_version: Option<u8>,
    pub cgroup_path: Option<String>,
    pub cgroup_cpus: Option<IdList>,
    pub cgroup_mems: Option<IdList>,
}

pub fn build(topo: &Topology, warnings: Vec<String>) -> TopoJson {
    let r = &topo.restrictions;
    TopoJson {
        schema: SCHEMA,
        provenance: None,
        numa_source: topo.numa,
        cpu_model: topo.cpu_model.clone(),
        cpu_vendor: topo.cpu_vendor.clone(),
        memory_total_bytes: topo.memory_total_bytes,
        nodes: topo.nodes.iter().map(node_json).collect(),
        cpus: topo.cpus.iter().map(cpu_json).collect(),
        caches: topo.caches.iter().map(cache_json).collect(),
        devices: topo.devices.iter().map(device_json).collect(),
        restrictions: RestrictionsJson {
            allowed_cpus: r.allowed_cpus.clone(),
            allowed_mems: r.allowed_mems.clone(),
            offline_cpus: topo.offline_cpus(),
            cgroup_version: r.cgroup_version,
            cgroup_path: r.cgroup_path.clone(),
            cgroup_cpus: r.cgroup_cpus.clone(),
            cgroup_mems: r.cgroup_mems.clone(),
        },
        warnings,
    }
}

fn node_json(n: &Node) -> NodeJson {
    NodeJson {
        id: n.id,
        cpus: n.cpus.clone(),
        has_cpus: n.has_cpus(),
        memory_total_bytes: n.memory_total_bytes,
        memory_free_bytes: n.memory_free_bytes,
        distances: n.distances.clone(),
        has_memory: n.has_memory,
        hmat: n
            .access
            .iter()
            .map(|a| HmatJson {
                access_class: a.class,
                initiator_nodes: a.initiators.clone(),
                read_latency_ns: a.read_latency_ns,
                write_latency_ns: a.write_latency_ns,
                read_bandwidth_mb_per_sec: a.read_bandwidth_mb_per_sec,
                write_bandwidth_mb_per_sec: a.write_bandwidth_mb_per_sec,
            })
            .collect(),
    }
}

fn cpu_json(c: &Cpu) -> CpuJson {
    CpuJson {
        id: c.id,
        node: c.node,
        package: c.package,
        die: c.die,
        cluster: c.cluster,
        core: c.core,
        online: c.online,
        thread_siblings: c.thread_siblings.clone(),
    }
}

fn cache_json(c: &CacheDomain) -> CacheJson {
    CacheJson {
        level: c.level,
        kind: c.kind.to_string(),
        size_bytes: c.size_bytes,
        line_size_bytes: c.line_size_bytes,
        cpus: c.cpus.clone(),
    }
}

/// PCI ids in hex, as lspci shows them.
fn device_json(d: &Device) -> DeviceJson {
    DeviceJson {
        kind: d.kind,
        name: d.name.clone(),
        pci: d.pci.clone(),
        node: d.node,
        local_cpus: d.local_cpus.clone(),
        class: d.class.map(|v| format!("0x{v:06x}")),
        vendor: d.vendor.map(|v| format!("0x{v:04x}")),
        device: d.device.map(|v| format!("0x{v:04x}")),
    }
}
