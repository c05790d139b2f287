//! IRQ locality: which CPUs serve each device's interrupts, whether those
//! are on the device's node, and a plan that spreads them over its local
//! CPUs. Shared by `doctor` (the finding) and `irq` (the table and fix).

use std::collections::BTreeMap;
use std::path::PathBuf;

use numasleuth_model::{DeviceKind, Topology};
use numasleuth_parse::gather::HostReadings;
use numasleuth_parse::IdList;
use serde::ser::SerializeStruct;
use serde::{Serialize, Serializer};

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct IrqRow {
    pub irq: u32,
    /// Handler names from /proc/interrupts, e.g. `eth0-rx-0`.
    pub actions: String,
    pub affinity: Option<IdList>,
    pub effective: Option<IdList>,
    /// Interrupts served so far, summed over CPUs.
    pub count: u64,
    /// Served (effective, else allowed) by a CPU outside the device's node.
    pub off_node: bool,
    /// Why this IRQ could not be read, if it could not.
    pub error: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DeviceIrqs {
    pub kind: DeviceKind,
    pub name: String,
    pub pci: String,
    pub node: Option<u32>,
    pub local_cpus: Option<IdList>,
    pub irqs: Vec<IrqRow>,
    pub error: Option<String>,
}

/// `irq`'s document: the audit, the plan when one was asked for, and the
/// journal `--apply` wrote (report puts the schema over it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IrqDocument {
    pub devices: Vec<DeviceIrqs>,
    pub irqbalance_pids: Vec<u32>,
    /// Empty without `--fix` or `--apply`.
    pub plan: Vec<AffinityChange>,
    /// The undo journal `--apply` wrote; `None` when nothing was applied.
    pub journal: Option<PathBuf>,
}

/// By hand because `applied`, derived from the journal, sits before it,
/// and the journal is written as its path's text.
impl Serialize for IrqDocument {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut doc = serializer.serialize_struct("IrqDocument", 5)?;
        doc.serialize_field("devices", &self.devices)?;
        doc.serialize_field("irqbalance_pids", &self.irqbalance_pids)?;
        doc.serialize_field("plan", &self.plan)?;
        doc.serialize_field("applied", &self.journal.is_some())?;
        let journal = self.journal.as_ref().map(|path| path.display().to_string());
        doc.serialize_field("journal", &journal)?;
        doc.end()
    }
}

/// Where an IRQ is really served: the effective set once the kernel has
/// one, else every CPU it may use.
fn served(row: &IrqRow) -> Option<&IdList> {
    row.effective
        .as_ref()
        .filter(|e| !e.is_empty())
        .or(row.affinity.as_ref())
}

pub fn audit(topo: &Topology, host: &HostReadings) -> Vec<DeviceIrqs> {
    let interrupts: BTreeMap<u32, (String, u64)> = host
        .interrupts
        .iter()
        .flatten()
        .filter_map(|line| Some((line.irq?, (line.actions.clone(), line.total()))))
        .collect();
    let online = topo.online_cpus();
    topo.devices
        .iter()
        .map(|device| {
            // A device's local CPUs are meaningful only when they are a
            // proper subset of the machine; on one node nothing is remote.
            let local = device
                .local_cpus
                .as_ref()
                .map(|l| l.intersection(&online))
                .filter(|l| !l.is_empty() && *l != online && device.node.is_some());
            let (irqs, error) = match host.device_irqs.get(&device.pci) {
                Some(Ok(irqs)) => (irqs.clone(), None),
                Some(Err(e)) => (Vec::new(), Some(e.to_string())),
                None => (Vec::new(), None),
            };
            let rows = irqs
                .iter()
                .map(|irq| {
                    let (actions, count) = interrupts.get(irq).cloned().unwrap_or_default();
                    let mut row = IrqRow {
                        irq: *irq,
                        actions,
                        affinity: None,
                        effective: None,
                        count,
                        off_node: false,
                        error: None,
                    };
                    match host.irq_affinity.get(irq) {
                        Some(Ok(a)) => {
                            row.affinity = a.affinity.clone();
                            row.effective = a.effective.clone();
                        }
                        Some(Err(e)) => row.error = Some(e.to_string()),
                        None => {}
                    }
                    row.off_node = match (&local, served(&row)) {
                        (Some(local), Some(served)) => !served.is_subset(local),
                        _ => false,
                    };
                    row
                })
                .collect();
            DeviceIrqs {
                kind: device.kind,
                name: device.name.clone(),
                pci: device.pci.clone(),
                node: device.node,
                local_cpus: device.local_cpus.clone(),
                irqs: rows,
                error,
            }
        })
        .collect()
}

/// One affinity write: `/proc/irq/<irq>/smp_affinity_list` from → to.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct AffinityChange {
    pub irq: u32,
    pub device: String,
    pub before: String,
    pub after: String,
}

/// Spreads each device's off-node IRQs over its online local CPUs: with at
/// least as many IRQs as CPUs, one CPU each, round-robin (queues keep their
/// own CPU); with fewer, each IRQ gets an equal slice of the local CPUs, so a
/// single legacy IRQ may use the whole node.
pub fn plan(topo: &Topology, devices: &[DeviceIrqs]) -> Vec<AffinityChange> {
    let online = topo.online_cpus();
    let mut changes = Vec::new();
    for device in devices {
        let Some(local) = device.local_cpus.as_ref().map(|l| l.intersection(&online)) else {
            continue;
        };
        let moving: Vec<&IrqRow> = device.irqs.iter().filter(|r| r.off_node).collect();
        if local.is_empty() || moving.is_empty() {
            continue;
        }
        let slices = cpu_slices(local.ids(), moving.len());
        for (row, cpus) in moving.iter().zip(slices) {
            changes.push(AffinityChange {
                irq: row.irq,
                device: device.name.clone(),
                before: row.affinity.as_ref().map(|a| a.to_string()).unwrap_or_default(),
                after: cpus.to_string(),
            });
        }
    }
    changes
}

/// `count` CPU sets drawn from `cpus`, as described at [`plan`].
pub fn cpu_slices(cpus: &[u32], count: usize) -> Vec<IdList> {
    if count >= cpus.len() {
        return (0..count).map(|i| IdList::new(vec![cpus[i % cpus.len()]])).collect();
    }
    let size = cpus.len() / count;
    (0..count)
        .map(|i| {
            let end = if i + 1 == count { cpus.len() } else { (i + 1) * size };
            IdList::new(cpus[i * size..end].to_vec())
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn show(slices: Vec<IdList>) -> Vec<String> {
        slices.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn one_irq_gets_the_whole_node() {
        assert_eq!(show(cpu_slices(&[2, 3], 1)), ["2-3"]);
    }

    #[test]
    fn many_queues_round_robin() {
        assert_eq!(show(cpu_slices(&[2, 3], 3)), ["2", "3", "2"]);
    }

    #[test]
    fn fewer_irqs_than_cpus_share_evenly() {
        assert_eq!(show(cpu_slices(&[8, 9, 10, 11, 12], 2)), ["8-9", "10-12"]);
    }

    /// An applied plan writes `applied` true and the journal's path; the
    /// golden test covers the dry run.
    #[test]
    fn an_applied_document_names_its_journal() {
        let document = IrqDocument {
            devices: vec![],
            irqbalance_pids: vec![812],
            plan: vec![],
            journal: Some(PathBuf::from("irq.journal.json")),
        };
        let json = serde_json::to_string(&document).unwrap();
        assert_eq!(
            json,
            r#"{"devices":[],"irqbalance_pids":[812],"plan":[],"applied":true,"journal":"irq.journal.json"}"#
        );
    }
}
