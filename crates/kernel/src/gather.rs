//! Everything the topology model needs, read in one pass.
//!
//! Kept apart from the model so the model stays a pure function of these
//! readings, and so `snapshot` can run exactly this pass under a recording
//! root.

pub use numasleuth_parse::gather::*;

use crate::cgroup;
use crate::error::display_path;
use crate::error::ReadError;
use crate::procfs::cpuinfo;
use crate::procfs::interrupts;
use crate::procfs::meminfo;
use crate::procfs::processes;
use crate::procfs::settings;
use crate::procfs::status;
use crate::procfs::zoneinfo;
use crate::read;
use crate::root::Root;
use crate::sysfs::cpu;
use crate::sysfs::node;
use crate::sysfs::pci;
use crate::unread::{required, Gaps, Unread, ABSENT_FROM_TREE};
use std::collections::BTreeMap;

/// Reads what it can: an unusable file is noted in `unread` and the rest
/// goes on. A tree where nothing at all could be read, because of such
/// failures, is an error (the first failure). So is a tree that names no
/// CPU, or that has a node directory with no node in it: every machine has
/// a CPU and, with NUMA, a node, and reporting on such a tree would call an
/// empty machine healthy.
pub fn read_topology(root: &Root) -> Result<TopologyReadings, ReadError> {
    let mut gaps = Gaps::default();
    let meminfo = gaps.keep(required(
        "proc/meminfo",
        read::parsed(root, "proc/meminfo", meminfo::parse),
    ));
    let nodes = node::read(root, &mut gaps);
    let cpus = cpu::read(root, &mut gaps);
    let cpuinfo = gaps.keep(cpuinfo::read(root));
    let allowed = gaps.keep(required("proc/self/status", status::read_allowed(root, "proc/self")));
    let cgroup = gaps.keep(cgroup::read(root));
    let devices = pci::read_devices(root, &mut gaps);
    // Every kernel makes the CPU directory: a tree without it was cut
    // short (CPUs may still be named by /proc/cpuinfo).
    if cpus.is_none() && matches!(root.list(cpu::CPU_DIR), Ok(None)) {
        gaps.push(Unread::new(display_path(cpu::CPU_DIR), ABSENT_FROM_TREE));
    }
    let first = gaps.first().cloned();
    let readings = TopologyReadings {
        nodes,
        cpus,
        meminfo,
        cpuinfo,
        allowed,
        cgroup,
        devices,
        unread: gaps.into_unread(),
    };
    match (readings.not_a_machine(), first) {
        (Some((path, what)), first) => Err(ReadError::Io {
            path: path.into(),
            message: format!(
                "{what}{}: this tree does not describe a machine, so there is nothing to report on",
                first.map_or(String::new(), |e| format!(" (first unreadable file: {e})"))
            ),
            errno: None,
        }),
        (None, Some(error)) if !readings.is_usable() => Err(error),
        (None, _) => Ok(readings),
    }
}

pub fn read_host(root: &Root, topology: &TopologyReadings) -> HostReadings {
    let mut gaps = Gaps::default();
    let mut device_irqs = BTreeMap::new();
    let mut irq_affinity = BTreeMap::new();
    for device in &topology.devices {
        let irqs = root
            .resolve(&format!("sys/bus/pci/devices/{}", device.pci.address))
            .and_then(|dir| pci::read_irqs(root, &dir));
        let irqs = noted(&mut gaps, irqs);
        for irq in irqs.iter().flatten() {
            if !irq_affinity.contains_key(irq) {
                let affinity = interrupts::read_affinity(root, *irq, &mut gaps);
                irq_affinity.insert(*irq, noted(&mut gaps, affinity));
            }
        }
        device_irqs.insert(device.pci.address.clone(), irqs);
    }
    let settings = settings::read(root, &mut gaps);
    for (relative, value) in [
        ("proc/sys/vm/min_free_kbytes", settings.min_free_kbytes.is_some()),
        ("proc/cmdline", settings.kernel_cmdline.is_some()),
    ] {
        // One that is there but unreadable was noted by `settings::read`.
        if !value && !root.exists(relative) {
            let _ = noted(&mut gaps, required(relative, Ok(None::<()>)));
        }
    }
    let zones = noted(&mut gaps, required("proc/zoneinfo", zoneinfo::read(root)));
    if let Ok(zones) = &zones {
        let zone_nodes: Vec<u32> = zones.iter().map(|z| z.node).collect();
        if let Some(missing) = topology.nodes_missing(&zone_nodes) {
            gaps.push(missing);
        }
    }
    let vmstat = noted(&mut gaps, required("proc/vmstat", settings::read_vmstat(root)));
    let interrupts = noted(&mut gaps, required("proc/interrupts", interrupts::read(root)));
    let irqbalance_pids = processes::find_by_comm(root, "irqbalance", &mut gaps);
    let irqbalance_pids = noted(&mut gaps, irqbalance_pids);
    let mut unread = topology.unread.clone();
    unread.extend(gaps.into_unread());
    HostReadings {
        base_page_bytes: crate::pages::base_page_bytes(root),
        settings,
        zones,
        vmstat,
        interrupts,
        device_irqs,
        irq_affinity,
        irqbalance_pids,
        unread,
    }
}

/// Keeps the result for the check that needs it, and notes a failure that
/// is not absence.
fn noted<T>(gaps: &mut Gaps, result: Result<T, ReadError>) -> Result<T, ReadError> {
    if let Err(e) = &result {
        gaps.note(e);
    }
    result
}

pub use crate::memory_sample::memory_sample;
