//! `doctor`: every static check over one machine's state, as pure
//! functions of what was read. A check whose input could not be read is
//! skipped with the reason; it never aborts the others.

mod irq_checks;
mod memory;
mod settings;
mod topology;

use numasleuth_kernel::gather::HostReadings;
use numasleuth_model::Topology;

use crate::findings::Diagnosis;

pub use irq_checks::IRQ_OFF_NODE;

/// Runs every static check. `--measure` and `--pid` add their findings to
/// the returned diagnosis afterwards.
pub fn diagnose(topo: &Topology, host: &HostReadings) -> Diagnosis {
    let mut diagnosis = Diagnosis::default();
    topology::check(topo, host, &mut diagnosis);
    settings::check(topo, host, &mut diagnosis);
    memory::check(topo, host, &mut diagnosis);
    irq_checks::check(topo, host, &mut diagnosis);
    diagnosis
}

/// How many nodes have memory; multi-node checks mean nothing below two.
fn memory_nodes(topo: &Topology) -> usize {
    topo.nodes
        .iter()
        .filter(|n| n.has_memory.unwrap_or(n.memory_total_bytes.unwrap_or(0) > 0))
        .count()
}

fn mib(bytes: u64) -> u64 {
    bytes >> 20
}
