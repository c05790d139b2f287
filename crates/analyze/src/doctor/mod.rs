//! `doctor`: every static check over one machine's state, as pure
//! functions of what was read. A check whose input could not be read is
//! skipped with the reason; one that could read only part of its input
//! runs on that part and is listed as partial with what it missed. Neither
//! aborts the others, and neither counts as clean.

mod check_id;
mod inputs;
mod irq_checks;
mod memory;
mod settings;
mod topology;

use numasleuth_model::Topology;
use numasleuth_parse::gather::HostReadings;

use crate::findings::{Diagnosis, Partial, Severity};

pub use check_id::CheckId;
pub use inputs::reads;

mod gate;
pub use gate::{gate, Gate};

/// Runs every static check. `--measure` and `--pid` add their findings to
/// the returned diagnosis afterwards.
pub fn diagnose(topo: &Topology, host: &HostReadings) -> Diagnosis {
    let mut diagnosis = Diagnosis::default();
    topology::check(topo, host, &mut diagnosis);
    settings::check(topo, host, &mut diagnosis);
    memory::check(topo, host, &mut diagnosis);
    irq_checks::check(topo, host, &mut diagnosis);
    for id in diagnosis.checks_run.clone() {
        let unread: Vec<_> = host
            .unread
            .iter()
            .filter(|u| id.inputs().iter().any(|pattern| reads(pattern, &u.path)))
            .cloned()
            .collect();
        if !unread.is_empty() {
            diagnosis.checks_partial.push(Partial { id, unread });
        }
    }
    diagnosis
}

/// Checks that could have reported something at `threshold` or worse but
/// could not read all their inputs: `--fail-on` cannot vouch for them.
pub fn uncertain_at(diagnosis: &Diagnosis, threshold: Severity) -> Vec<CheckId> {
    let mut ids: Vec<CheckId> = diagnosis.incomplete().filter(|id| id.worst() >= threshold).collect();
    ids.dedup();
    ids
}

/// How many nodes have memory; multi-node checks mean nothing below two.
fn memory_nodes(topo: &Topology) -> usize {
    topo.memory_nodes().len()
}

fn mib(bytes: u64) -> u64 {
    bytes >> 20
}
