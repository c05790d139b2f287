//! IRQ locality and irqbalance.

use numasleuth_model::Topology;
use numasleuth_parse::gather::HostReadings;

use super::CheckId;
use crate::findings::{incident, Diagnosis, Evidence, Finding, Severity};
use crate::irq::audit;

pub fn check(topo: &Topology, host: &HostReadings, out: &mut Diagnosis) {
    if let Err(e) = &host.interrupts {
        out.skipped_for(CheckId::IrqOffNode, e);
    } else {
        out.ran(CheckId::IrqOffNode, off_node(topo, host));
    }
    match &host.irqbalance_pids {
        Ok(pids) => out.ran(CheckId::IrqbalanceRunning, irqbalance(pids)),
        Err(e) => out.skipped_for(CheckId::IrqbalanceRunning, e),
    }
}

fn off_node(topo: &Topology, host: &HostReadings) -> Vec<Finding> {
    audit(topo, host)
        .into_iter()
        .filter(|d| d.irqs.iter().any(|r| r.off_node))
        .map(|device| {
            let node = device.node.map_or("?".to_string(), |n| n.to_string());
            let local = device.local_cpus.as_ref().map_or("?".to_string(), |l| l.to_string());
            let bad: Vec<_> = device.irqs.iter().filter(|r| r.off_node).collect();
            let mut evidence = vec![Evidence::new(
                format!("/sys/bus/pci/devices/{}", device.pci),
                format!(
                    "{} {} ({}) is on node {node}, local CPUs {local} (/sys/bus/pci/devices/{}/numa_node, local_cpulist)",
                    device.kind, device.name, device.pci, device.pci
                ),
            )
            .with_some("node", device.node)
            .with_some("local_cpus", device.local_cpus.as_ref())];
            evidence.extend(bad.iter().map(|r| {
                let text = format!(
                    "IRQ {}{}: smp_affinity_list {}, effective {} ({} interrupts) (/proc/irq/{}/)",
                    r.irq,
                    if r.actions.is_empty() {
                        String::new()
                    } else {
                        format!(" ({})", r.actions)
                    },
                    r.affinity.as_ref().map_or("?".into(), |a| a.to_string()),
                    r.effective.as_ref().map_or("?".into(), |a| a.to_string()),
                    r.count,
                    r.irq
                );
                Evidence::new(format!("/proc/irq/{}", r.irq), text)
                    .with("irq", r.irq)
                    .with_some("affinity_cpus", r.affinity.as_ref())
                    .with_some("effective_cpus", r.effective.as_ref())
                    .with("interrupts", r.count)
            }));
            // An IRQ that never fired costs nothing yet: worth knowing, not a warning.
            let busy = bad.iter().any(|r| r.count > 0);
            Finding {
                id: CheckId::IrqOffNode.as_str(),
                severity: if busy { Severity::Warning } else { Severity::Info },
                confidence: None,
                title: format!(
                    "{} of {} IRQs of {} {} are served off its node {node}{}",
                    bad.len(),
                    device.irqs.len(),
                    device.kind,
                    device.name,
                    if busy { "" } else { " (no interrupts since boot yet)" }
                ),
                evidence,
                remedy: format!(
                    "`numasleuth irq --fix` shows a plan spreading them over CPUs {local}; `numasleuth irq --apply` \
                     applies it with an undo journal. Stop irqbalance or give it a policy, or it will move them back."
                ),
                incident: Some(incident::REMOTE_IRQ),
                explains: Vec::new(),
            }
        })
        .collect()
}

fn irqbalance(pids: &[u32]) -> Vec<Finding> {
    if pids.is_empty() {
        return Vec::new();
    }
    vec![Finding {
        id: CheckId::IrqbalanceRunning.as_str(),
        severity: Severity::Info,
        confidence: None,
        title: "irqbalance is running: it rewrites IRQ affinity periodically".into(),
        evidence: vec![Evidence::new(
            "/proc/<pid>/comm",
            format!(
                "process irqbalance, pid {} (/proc/<pid>/comm)",
                pids.iter().map(u32::to_string).collect::<Vec<_>>().join(", ")
            ),
        )
        .with("pids", pids)],
        remedy: "Before pinning IRQs by hand, `systemctl stop irqbalance` or ban the IRQs \
                 (IRQBALANCE_BANNED_CPULIST / --banirq), or your fix is undone within seconds."
            .into(),
        incident: Some(incident::REMOTE_IRQ),
        explains: Vec::new(),
    }]
}
