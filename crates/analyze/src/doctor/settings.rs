//! Kernel knobs with a NUMA story: AutoNUMA, zone_reclaim_mode, THP and
//! min_free_kbytes.

use numasleuth_model::Topology;
use numasleuth_parse::gather::HostReadings;
use numasleuth_parse::procfs::settings::{Settings, ThpMode};

use super::memory_nodes;
use super::CheckId;
use crate::findings::{incident, Diagnosis, Evidence, Finding, Severity};

pub fn check(topo: &Topology, host: &HostReadings, out: &mut Diagnosis) {
    let settings = &host.settings;
    let multi_node = memory_nodes(topo) > 1;
    match settings.numa_balancing {
        Some(mode) => out.ran(CheckId::NumaBalancing, numa_balancing(mode, multi_node, host)),
        None => missing(out, host, CheckId::NumaBalancing, &["/proc/sys/kernel/numa_balancing"]),
    }
    match settings.zone_reclaim_mode {
        Some(mode) => out.ran(CheckId::ZoneReclaimMode, zone_reclaim(mode, multi_node)),
        None => missing(out, host, CheckId::ZoneReclaimMode, &["/proc/sys/vm/zone_reclaim_mode"]),
    }
    match (&settings.thp_enabled, &settings.thp_defrag) {
        (Some(enabled), Some(defrag)) => out.ran(CheckId::TransparentHugepages, thp(enabled, defrag)),
        _ => missing(
            out,
            host,
            CheckId::TransparentHugepages,
            &[
                "/sys/kernel/mm/transparent_hugepage/enabled",
                "/sys/kernel/mm/transparent_hugepage/defrag",
            ],
        ),
    }
    match settings.min_free_kbytes {
        Some(_) => out.ran(CheckId::MinFreeKbytes, min_free(topo, settings)),
        None => missing(out, host, CheckId::MinFreeKbytes, &["/proc/sys/vm/min_free_kbytes"]),
    }
}

/// A knob read as absent: unreadable if the readers noted it, else the
/// kernel does not have it (nothing to judge).
fn missing(out: &mut Diagnosis, host: &HostReadings, id: CheckId, paths: &[&str]) {
    match host.unread.iter().find(|u| paths.contains(&u.path.as_str())) {
        Some(unread) => out.skipped_unreadable(id, unread.to_string()),
        None => out.skipped(
            id,
            format!("{}: not found (the kernel has no such knob)", paths.join(", ")),
        ),
    }
}

fn vmstat_evidence(host: &HostReadings, names: &[&'static str]) -> Vec<Evidence> {
    let Ok(vmstat) = &host.vmstat else {
        return Vec::new();
    };
    names
        .iter()
        .filter_map(|n| {
            vmstat.get(*n).map(|v| {
                // The counter's own name: these count events (faults, pages).
                Evidence::new("/proc/vmstat", format!("{n} {v} (/proc/vmstat, since boot)")).with(n, *v)
            })
        })
        .collect()
}

fn numa_balancing(mode: u64, multi_node: bool, host: &HostReadings) -> Vec<Finding> {
    if mode == 0 || !multi_node {
        return Vec::new();
    }
    let mut evidence = vec![Evidence::new(
        "/proc/sys/kernel/numa_balancing",
        format!("kernel.numa_balancing = {mode} (/proc/sys/kernel/numa_balancing)"),
    )
    .with("numa_balancing", mode)];
    evidence.extend(vmstat_evidence(
        host,
        &["numa_hint_faults", "numa_hint_faults_local", "numa_pages_migrated"],
    ));
    vec![Finding {
        id: CheckId::NumaBalancing.as_str(),
        severity: Severity::Info,
        confidence: None,
        title: "automatic NUMA balancing (AutoNUMA) is on".into(),
        evidence,
        remedy: "Keep it for long-running processes that rarely move between nodes and have no explicit placement. \
                 Turn it off (`sysctl -w kernel.numa_balancing=0`) for short-lived or frequently migrating processes, \
                 and for services that pin threads and bind memory themselves: its hinting faults and page \
                 migrations then cost CPU and add latency, and explicit `numactl` policy usually does better."
            .into(),
        incident: None,
        explains: Vec::new(),
    }]
}

fn zone_reclaim(mode: u64, multi_node: bool) -> Vec<Finding> {
    if mode == 0 || !multi_node {
        return Vec::new();
    }
    vec![Finding {
        id: CheckId::ZoneReclaimMode.as_str(),
        severity: Severity::Warning,
        confidence: None,
        title: format!("vm.zone_reclaim_mode = {mode}: nodes reclaim locally instead of spilling to other nodes"),
        evidence: vec![Evidence::new(
            "/proc/sys/vm/zone_reclaim_mode",
            format!("vm.zone_reclaim_mode = {mode} (/proc/sys/vm/zone_reclaim_mode)"),
        )
        .with("zone_reclaim_mode", mode)],
        remedy: "`sysctl -w vm.zone_reclaim_mode=0` (and in /etc/sysctl.d) unless the workload is known to fit in one \
                 node and prefers local reclaim; with it on, page-cache-heavy services stall in reclaim while another \
                 node has free memory."
            .into(),
        incident: Some(incident::ZONE_RECLAIM),
        explains: Vec::new(),
    }]
}

fn thp(enabled: &ThpMode, defrag: &ThpMode) -> Vec<Finding> {
    if *enabled == ThpMode::Never || *defrag != ThpMode::Always {
        return Vec::new();
    }
    vec![Finding {
        id: CheckId::TransparentHugepages.as_str(),
        severity: Severity::Warning,
        confidence: None,
        title: "THP defrag=always: page faults may stall in direct compaction".into(),
        // Words, not numbers: the values are empty, the text is the setting.
        evidence: vec![
            Evidence::new(
                "/sys/kernel/mm/transparent_hugepage/enabled",
                format!("/sys/kernel/mm/transparent_hugepage/enabled = {enabled}"),
            ),
            Evidence::new(
                "/sys/kernel/mm/transparent_hugepage/defrag",
                format!("/sys/kernel/mm/transparent_hugepage/defrag = {defrag}"),
            ),
        ],
        remedy: "`echo defer+madvise > /sys/kernel/mm/transparent_hugepage/defrag` so faults never wait for \
                 compaction (khugepaged collapses later), keeping huge pages where madvise asks for them."
            .into(),
        incident: Some(incident::ZONE_RECLAIM),
        explains: Vec::new(),
    }]
}

/// The reserve is split among nodes by size; on a machine with a small node
/// a large min_free_kbytes pins a big share of that node's memory.
fn min_free(topo: &Topology, settings: &Settings) -> Vec<Finding> {
    let Some(min_free_kbytes) = settings.min_free_kbytes else {
        return Vec::new();
    };
    let reserve_bytes = min_free_kbytes * 1024;
    let Some(smallest) = topo
        .nodes
        .iter()
        .filter_map(|n| n.memory_bytes().map(|b| (n.id, b)))
        .min_by_key(|(_, b)| *b)
    else {
        return Vec::new();
    };
    let total: u64 = topo.nodes.iter().filter_map(|n| n.memory_bytes()).sum();
    let share_bytes = reserve_bytes as f64 * smallest.1 as f64 / total.max(1) as f64;
    let share_percent = 100.0 * share_bytes / smallest.1 as f64;
    if share_percent <= 5.0 {
        return Vec::new();
    }
    vec![Finding {
        id: CheckId::MinFreeKbytes.as_str(),
        severity: Severity::Warning,
        confidence: None,
        title: format!("vm.min_free_kbytes reserves {share_percent:.1}% of node {}", smallest.0),
        evidence: vec![
            Evidence::new(
                "/proc/sys/vm/min_free_kbytes",
                format!("vm.min_free_kbytes = {min_free_kbytes} (/proc/sys/vm/min_free_kbytes)"),
            )
            .with("min_free_kbytes", min_free_kbytes),
            Evidence::new(
                "/sys/devices/system/node",
                format!(
                    "node {} has {} MiB of {} MiB in total; its pro-rata share of the reserve is {:.0} MiB",
                    smallest.0,
                    super::mib(smallest.1),
                    super::mib(total),
                    share_bytes / 1048576.0
                ),
            )
            .with("node", smallest.0)
            .with("node_total_bytes", smallest.1)
            .with("total_bytes", total)
            .with("reserve_share_bytes", share_bytes)
            .with("reserve_share_percent", share_percent),
        ],
        remedy: "Lower vm.min_free_kbytes towards the kernel default (about 4·sqrt(lowmem KiB)); a large reserve \
                 raises every watermark, wakes kswapd early and makes small nodes look full."
            .into(),
        incident: Some(incident::ZONE_RECLAIM),
        explains: Vec::new(),
    }]
}
