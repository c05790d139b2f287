//! What the app's request tests share: the machine they are refused on.

use std::collections::BTreeMap;

use numasleuth_app::machine::Machine;
use numasleuth_kernel::test_support::fixture;
use numasleuth_kernel::IdList;
use numasleuth_model::Topology;

/// The QEMU two-node capture (CPUs 0-1 on node 0, 2-3 on node 1) as this
/// process would see it, allowed `allowed` of its CPUs.
pub fn machine(allowed: &[u32]) -> Machine {
    let root = fixture("qemu-two-nodes");
    let readings = numasleuth_kernel::gather::read_topology(&root).expect("topology");
    Machine {
        topo: Topology::build_degraded(&readings).0,
        allowed_cpus: IdList::new(allowed.to_vec()),
        high_watermark_bytes: BTreeMap::new(),
    }
}
