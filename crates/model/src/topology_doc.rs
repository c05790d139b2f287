//! The machine as a document writes it (`topo --json`, and `topology` in
//! `doctor --json`), schema `numasleuth.topo/1`: the names and their order
//! are a contract scripts parse. `Cpu`, `CacheDomain` and `Device` derive
//! theirs; `Node` and `Topology` are written here because their documents
//! carry a derived fact beside the fields (`has_cpus`, `offline_cpus`),
//! each from its one definition on the model.

use numasleuth_parse::IdList;
use serde::ser::SerializeStruct;
use serde::{Serialize, Serializer};

use crate::{Node, Restrictions, Topology};

/// A PCI class code as `0x020000`, as lspci shows it.
pub(crate) fn pci_class<S: Serializer>(class: &Option<u32>, serializer: S) -> Result<S::Ok, S::Error> {
    match class {
        Some(class) => serializer.collect_str(&format_args!("0x{class:06x}")),
        None => serializer.serialize_none(),
    }
}

/// A PCI vendor or device id as `0x8086`, as lspci shows it.
pub(crate) fn pci_id<S: Serializer>(id: &Option<u16>, serializer: S) -> Result<S::Ok, S::Error> {
    match id {
        Some(id) => serializer.collect_str(&format_args!("0x{id:04x}")),
        None => serializer.serialize_none(),
    }
}

/// `hugetlb_bytes` is meminfo's to show, not this document's.
impl Serialize for Node {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut node = serializer.serialize_struct("Node", 8)?;
        node.serialize_field("id", &self.id)?;
        node.serialize_field("cpus", &self.cpus)?;
        node.serialize_field("has_cpus", &self.has_cpus())?;
        node.serialize_field("memory_total_bytes", &self.memory_total_bytes)?;
        node.serialize_field("memory_free_bytes", &self.memory_free_bytes)?;
        // In the order of `nodes`; `null` where the kernel gave no value.
        node.serialize_field("distances", &self.distances)?;
        node.serialize_field("has_memory", &self.has_memory)?;
        // HMAT performance per access class, where the firmware gives it.
        node.serialize_field("hmat", &self.access)?;
        node.end()
    }
}

impl Serialize for Topology {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut topo = serializer.serialize_struct("Topology", 9)?;
        // `sysfs`, or `implicit` when the kernel has no node sysfs.
        topo.serialize_field("numa_source", &self.numa)?;
        topo.serialize_field("cpu_model", &self.cpu_model)?;
        topo.serialize_field("cpu_vendor", &self.cpu_vendor)?;
        topo.serialize_field("memory_total_bytes", &self.memory_total_bytes)?;
        topo.serialize_field("nodes", &self.nodes)?;
        topo.serialize_field("cpus", &self.cpus)?;
        topo.serialize_field("caches", &self.caches)?;
        topo.serialize_field("devices", &self.devices)?;
        let offline_cpus = self.offline_cpus();
        topo.serialize_field("restrictions", &Limits(&self.restrictions, &offline_cpus))?;
        topo.end()
    }
}

/// The process's limits with the machine's offline CPUs among them, where
/// the document has always had them.
struct Limits<'a>(&'a Restrictions, &'a IdList);

impl Serialize for Limits<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let Limits(r, offline_cpus) = self;
        let mut limits = serializer.serialize_struct("Restrictions", 7)?;
        limits.serialize_field("allowed_cpus", &r.allowed_cpus)?;
        limits.serialize_field("allowed_mems", &r.allowed_mems)?;
        limits.serialize_field("offline_cpus", offline_cpus)?;
        limits.serialize_field("cgroup_version", &r.cgroup_version)?;
        limits.serialize_field("cgroup_path", &r.cgroup_path)?;
        limits.serialize_field("cgroup_cpus", &r.cgroup_cpus)?;
        limits.serialize_field("cgroup_mems", &r.cgroup_mems)?;
        limits.end()
    }
}
