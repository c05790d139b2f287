//! `irq` for people: each device, its node and local CPUs, and where each
//! of its IRQs is allowed and actually served.

use numasleuth_analyze::irq::{AffinityChange, DeviceIrqs};

use crate::layout::TextLayout;
use crate::table::{table, Col};

pub fn render(devices: &[DeviceIrqs], irqbalance_pids: &[u32], layout: &TextLayout) -> String {
    let mut rows = vec![[
        "DEVICE",
        "PCI",
        "NODE",
        "LOCAL CPUS",
        "IRQ",
        "HANDLER",
        "AFFINITY",
        "EFFECTIVE",
        "COUNT",
        "NOTE",
    ]
    .map(String::from)
    .to_vec()];
    for device in devices {
        let head = [
            format!("{} {}", device.kind, device.name),
            device.pci.clone(),
            device.node.map_or("-".into(), |n| n.to_string()),
            device.local_cpus.as_ref().map_or("?".into(), |c| c.to_string()),
        ];
        if device.irqs.is_empty() {
            let why = device.error.clone().unwrap_or_else(|| "no IRQs".into());
            rows.push(head.iter().cloned().chain([String::new(), why]).collect());
        }
        for irq in &device.irqs {
            let list = |l: &Option<numasleuth_parse::IdList>| l.as_ref().map_or("?".into(), |c| c.to_string());
            let mut row = head.to_vec();
            row.extend([
                irq.irq.to_string(),
                irq.actions.clone(),
                list(&irq.affinity),
                list(&irq.effective),
                irq.count.to_string(),
                if irq.off_node {
                    "OFF-NODE".into()
                } else {
                    irq.error.clone().unwrap_or_default()
                },
            ]);
            rows.push(row);
        }
    }
    // The device (`net eth0`) and handler names are cut, not split.
    let kinds = [Col::Name, Col::Wrap, Col::Wrap, Col::Wrap, Col::Wrap, Col::Name];
    let mut out = table(&rows, &kinds, layout);
    if !irqbalance_pids.is_empty() {
        out.push_str(&format!(
            "\nnote: irqbalance is running (pid {}); it will move IRQs again unless stopped.\n",
            irqbalance_pids
                .iter()
                .map(u32::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    out
}

pub fn render_plan(changes: &[AffinityChange], applied: bool) -> String {
    if changes.is_empty() {
        return "Nothing to change: no IRQ is served off its device's node.\n".into();
    }
    let verb = if applied { "changed" } else { "would change" };
    let mut out = String::new();
    for change in changes {
        out.push_str(&format!(
            "{verb} /proc/irq/{}/smp_affinity_list ({}): {} -> {}\n",
            change.irq,
            change.device,
            if change.before.is_empty() { "?" } else { &change.before },
            change.after
        ));
    }
    out
}
