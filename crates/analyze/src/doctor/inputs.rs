//! What each static check reads, and the worst it can report.
//!
//! The readers note every file that exists but could not be used; matching
//! those paths against these patterns tells which checks ran on partial
//! input. A check listed here too broadly is reported partial more often
//! than needed; one listed too narrowly could call itself clean without
//! having looked, so err broad.

use crate::findings::Severity;

/// One static check of `doctor`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Check {
    pub id: &'static str,
    /// The most severe finding it can raise: with `--fail-on` below this, a
    /// partial run of it cannot vouch for the machine.
    pub worst: Severity,
    /// Path patterns as shown to users (`/proc/irq/**`): `*` is one path
    /// segment, `name*` a segment starting with `name`, `**` any number of
    /// segments (none included).
    pub inputs: &'static [&'static str],
}

const NODES: &str = "/sys/devices/system/node/**";
const CPU_LIST: &str = "/sys/devices/system/cpu";
const CPU_STATES: [&str; 5] = [
    "/sys/devices/system/cpu/online",
    "/sys/devices/system/cpu/offline",
    "/sys/devices/system/cpu/present",
    "/sys/devices/system/cpu/possible",
    "/sys/devices/system/cpu/*/online",
];
const CPU_PLACES: [&str; 2] = ["/sys/devices/system/cpu/*", "/sys/devices/system/cpu/*/topology/**"];

pub const CHECKS: &[Check] = &[
    Check {
        id: "cpu-less-nodes",
        worst: Severity::Info,
        inputs: &[NODES, CPU_LIST, CPU_PLACES[0]],
    },
    Check {
        id: "offline-cpus",
        worst: Severity::Warning,
        inputs: &[
            CPU_LIST,
            CPU_STATES[0],
            CPU_STATES[1],
            CPU_STATES[2],
            CPU_STATES[3],
            CPU_STATES[4],
        ],
    },
    Check {
        id: "nodes-per-package",
        worst: Severity::Info,
        inputs: &[NODES, CPU_LIST, CPU_PLACES[0], CPU_PLACES[1]],
    },
    Check {
        id: "numa-disabled",
        worst: Severity::Warning,
        inputs: &["/proc/cmdline", NODES, CPU_LIST, CPU_PLACES[0], CPU_PLACES[1]],
    },
    Check {
        id: "cgroup-restricted",
        worst: Severity::Info,
        inputs: &[
            "/proc/self/status",
            "/proc/mounts",
            "/proc/self/cgroup",
            "/proc/self/cpuset",
            "/sys/fs/cgroup/**",
            NODES,
            CPU_LIST,
            CPU_STATES[0],
        ],
    },
    Check {
        id: "numa-balancing",
        worst: Severity::Info,
        inputs: &["/proc/sys/kernel/numa_balancing", NODES],
    },
    Check {
        id: "zone-reclaim-mode",
        worst: Severity::Warning,
        inputs: &["/proc/sys/vm/zone_reclaim_mode", NODES],
    },
    Check {
        id: "transparent-hugepages",
        worst: Severity::Warning,
        inputs: &["/sys/kernel/mm/transparent_hugepage/**"],
    },
    Check {
        id: "min-free-kbytes",
        worst: Severity::Warning,
        inputs: &["/proc/sys/vm/min_free_kbytes", NODES],
    },
    Check {
        id: "zone-watermark-pressure",
        worst: Severity::Critical,
        inputs: &["/proc/zoneinfo"],
    },
    Check {
        id: "free-memory-imbalance",
        worst: Severity::Warning,
        inputs: &[NODES],
    },
    Check {
        id: super::IRQ_OFF_NODE,
        worst: Severity::Warning,
        inputs: &[
            "/proc/interrupts",
            "/proc/irq/**",
            "/sys/bus/pci/**",
            "/sys/class/net/**",
            "/sys/class/nvme/**",
            "/sys/class/block/**",
            "/sys/devices/pci*/**",
            CPU_STATES[0],
        ],
    },
    Check {
        id: "irqbalance-running",
        worst: Severity::Info,
        inputs: &["/proc", numasleuth_parse::procfs::processes::COMM_PATTERN],
    },
];

/// Whether `pattern` (see [`Check::inputs`]) names `path`.
pub fn reads(pattern: &str, path: &str) -> bool {
    let pattern: Vec<&str> = pattern.split('/').filter(|s| !s.is_empty()).collect();
    let path: Vec<&str> = path.split('/').filter(|s| !s.is_empty()).collect();
    matches(&pattern, &path)
}

fn matches(pattern: &[&str], path: &[&str]) -> bool {
    match (pattern.first(), path.first()) {
        (None, None) => true,
        (Some(&"**"), _) => (0..=path.len()).any(|skip| matches(&pattern[1..], &path[skip..])),
        (Some(want), Some(have)) => {
            let fits = match want.strip_suffix('*') {
                Some(prefix) => have.starts_with(prefix),
                None => want == have,
            };
            fits && matches(&pattern[1..], &path[1..])
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn patterns() {
        assert!(reads("/proc/irq/**", "/proc/irq/40/smp_affinity_list"));
        assert!(reads("/proc/irq/**", "/proc/irq"));
        assert!(!reads("/proc/irq/**", "/proc/interrupts"));
        assert!(reads(
            "/sys/devices/system/cpu/*/online",
            "/sys/devices/system/cpu/cpu3/online"
        ));
        assert!(!reads(
            "/sys/devices/system/cpu/*/online",
            "/sys/devices/system/cpu/online"
        ));
        assert!(!reads(
            "/sys/devices/system/cpu/*/online",
            "/sys/devices/system/cpu/cpu3/cache/online"
        ));
        assert!(reads(
            "/sys/devices/pci*/**",
            "/sys/devices/pci0000:10/0000:10:00.0/numa_node"
        ));
        assert!(!reads("/sys/devices/pci*/**", "/sys/devices/system/node/node0/meminfo"));
        assert!(reads("/proc", "/proc"));
        assert!(!reads("/proc", "/proc/1/comm"));
        assert!(reads("/proc/[pid]/comm", "/proc/[pid]/comm"));
    }

    #[test]
    fn ids_are_unique() {
        let mut ids: Vec<_> = CHECKS.iter().map(|c| c.id).collect();
        ids.sort_unstable();
        ids.dedup();
        assert_eq!(ids.len(), CHECKS.len());
    }
}
