//! The checks `doctor` runs, each named once: its id as users and scripts
//! see it (`checks_run`, `checks_skipped[].id`, `--fail-on`'s message),
//! the most severe finding it can raise, and the files it reads. A check
//! that is not here cannot be run, so none can be left out of the partial
//! and `--fail-on` bookkeeping by a typo.

use serde::{Serialize, Serializer};

use crate::findings::Severity;

/// One check of `doctor`: the static ones over the machine's state, then
/// those the caller runs for `--measure` and `-p`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum CheckId {
    CpuLessNodes,
    OfflineCpus,
    NodesPerPackage,
    NumaDisabled,
    CgroupRestricted,
    NumaBalancing,
    ZoneReclaimMode,
    TransparentHugepages,
    MinFreeKbytes,
    ZoneWatermarkPressure,
    FreeMemoryImbalance,
    IrqOffNode,
    IrqbalanceRunning,
    /// `--measure`: the node×node bandwidth matrix.
    InterconnectBandwidth,
    /// `--measure`: a quick core-to-core latency matrix.
    VcpuSiblings,
    /// `-p --measure`: DAMON's hot memory of the process.
    ProcessHotMemory,
    /// Who opens the kernel files that take allocator locks.
    LockTakingReaders,
    /// `-p`: the placement findings of `inspect`.
    ProcessPlacement,
    /// `-p`: `contended-line` and `false-sharing` from a short `hotlines` sample.
    ProcessCacheLines,
    /// `-p`: `thread-hopping-nodes` and `numa-balancing-migrating` from a
    /// short `migrations` observation.
    ProcessMigrations,
    /// `-p`: the hot lines joined with the nodes of their pages.
    ProcessHotRemoteLines,
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

impl CheckId {
    /// The static checks, in the order `diagnose` runs them.
    pub const STATIC: [CheckId; 13] = [
        CheckId::CpuLessNodes,
        CheckId::OfflineCpus,
        CheckId::NodesPerPackage,
        CheckId::NumaDisabled,
        CheckId::CgroupRestricted,
        CheckId::NumaBalancing,
        CheckId::ZoneReclaimMode,
        CheckId::TransparentHugepages,
        CheckId::MinFreeKbytes,
        CheckId::ZoneWatermarkPressure,
        CheckId::FreeMemoryImbalance,
        CheckId::IrqOffNode,
        CheckId::IrqbalanceRunning,
    ];

    /// The stable kebab-case id in every output; a finding a check raises
    /// under its own name uses this too.
    pub const fn as_str(self) -> &'static str {
        match self {
            CheckId::CpuLessNodes => "cpu-less-nodes",
            CheckId::OfflineCpus => "offline-cpus",
            CheckId::NodesPerPackage => "nodes-per-package",
            CheckId::NumaDisabled => "numa-disabled",
            CheckId::CgroupRestricted => "cgroup-restricted",
            CheckId::NumaBalancing => "numa-balancing",
            CheckId::ZoneReclaimMode => "zone-reclaim-mode",
            CheckId::TransparentHugepages => "transparent-hugepages",
            CheckId::MinFreeKbytes => "min-free-kbytes",
            CheckId::ZoneWatermarkPressure => "zone-watermark-pressure",
            CheckId::FreeMemoryImbalance => "free-memory-imbalance",
            CheckId::IrqOffNode => "irq-off-node",
            CheckId::IrqbalanceRunning => "irqbalance-running",
            CheckId::InterconnectBandwidth => "interconnect-bandwidth",
            CheckId::VcpuSiblings => "vcpu-siblings",
            CheckId::ProcessHotMemory => "process-hot-memory",
            CheckId::LockTakingReaders => "lock-taking-readers",
            CheckId::ProcessPlacement => "process-placement",
            CheckId::ProcessCacheLines => "process-cache-lines",
            CheckId::ProcessMigrations => "process-migrations",
            CheckId::ProcessHotRemoteLines => "process-hot-remote-lines",
        }
    }

    /// The most severe finding it can raise: with `--fail-on` below this, a
    /// partial run of it cannot vouch for the machine. The caller's checks
    /// are taken to be able to say anything.
    pub const fn worst(self) -> Severity {
        match self {
            CheckId::CpuLessNodes
            | CheckId::NodesPerPackage
            | CheckId::CgroupRestricted
            | CheckId::NumaBalancing
            | CheckId::IrqbalanceRunning => Severity::Info,
            CheckId::OfflineCpus
            | CheckId::NumaDisabled
            | CheckId::ZoneReclaimMode
            | CheckId::TransparentHugepages
            | CheckId::MinFreeKbytes
            | CheckId::FreeMemoryImbalance
            | CheckId::IrqOffNode => Severity::Warning,
            CheckId::ZoneWatermarkPressure => Severity::Critical,
            CheckId::InterconnectBandwidth
            | CheckId::VcpuSiblings
            | CheckId::ProcessHotMemory
            | CheckId::LockTakingReaders
            | CheckId::ProcessPlacement
            | CheckId::ProcessCacheLines
            | CheckId::ProcessMigrations
            | CheckId::ProcessHotRemoteLines => Severity::Critical,
        }
    }

    /// Path patterns of what it reads, as shown to users (`/proc/irq/**`):
    /// `*` is one path segment, `name*` a segment starting with `name`,
    /// `**` any number of segments (none included). Listed too broadly, a
    /// check is reported partial more often than needed; too narrowly, it
    /// could call itself clean without having looked, so err broad. The
    /// caller's checks report their own unread input, so list none.
    pub const fn inputs(self) -> &'static [&'static str] {
        match self {
            CheckId::CpuLessNodes => &[NODES, CPU_LIST, CPU_PLACES[0]],
            CheckId::OfflineCpus => &[
                CPU_LIST,
                CPU_STATES[0],
                CPU_STATES[1],
                CPU_STATES[2],
                CPU_STATES[3],
                CPU_STATES[4],
            ],
            CheckId::NodesPerPackage => &[NODES, CPU_LIST, CPU_PLACES[0], CPU_PLACES[1]],
            CheckId::NumaDisabled => &["/proc/cmdline", NODES, CPU_LIST, CPU_PLACES[0], CPU_PLACES[1]],
            CheckId::CgroupRestricted => &[
                "/proc/self/status",
                "/proc/mounts",
                "/proc/self/cgroup",
                "/proc/self/cpuset",
                "/sys/fs/cgroup/**",
                NODES,
                CPU_LIST,
                CPU_STATES[0],
            ],
            CheckId::NumaBalancing => &["/proc/sys/kernel/numa_balancing", NODES],
            CheckId::ZoneReclaimMode => &["/proc/sys/vm/zone_reclaim_mode", NODES],
            CheckId::TransparentHugepages => &["/sys/kernel/mm/transparent_hugepage/**"],
            CheckId::MinFreeKbytes => &["/proc/sys/vm/min_free_kbytes", NODES],
            CheckId::ZoneWatermarkPressure => &["/proc/zoneinfo"],
            CheckId::FreeMemoryImbalance => &[NODES],
            CheckId::IrqOffNode => &[
                "/proc/interrupts",
                "/proc/irq/**",
                "/sys/bus/pci/**",
                "/sys/class/net/**",
                "/sys/class/nvme/**",
                "/sys/class/block/**",
                "/sys/devices/pci*/**",
                CPU_STATES[0],
            ],
            CheckId::IrqbalanceRunning => &["/proc", numasleuth_parse::procfs::processes::COMM_PATTERN],
            CheckId::InterconnectBandwidth
            | CheckId::VcpuSiblings
            | CheckId::ProcessHotMemory
            | CheckId::LockTakingReaders
            | CheckId::ProcessPlacement
            | CheckId::ProcessCacheLines
            | CheckId::ProcessMigrations
            | CheckId::ProcessHotRemoteLines => &[],
        }
    }
}

impl std::fmt::Display for CheckId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// As its id string, so the JSON is what it was when ids were strings.
impl Serialize for CheckId {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_unique_and_serialise_as_their_string() {
        let all = [
            CheckId::STATIC.to_vec(),
            vec![
                CheckId::InterconnectBandwidth,
                CheckId::VcpuSiblings,
                CheckId::ProcessHotMemory,
                CheckId::LockTakingReaders,
                CheckId::ProcessPlacement,
                CheckId::ProcessCacheLines,
                CheckId::ProcessMigrations,
                CheckId::ProcessHotRemoteLines,
            ],
        ]
        .concat();
        let mut ids: Vec<_> = all.iter().map(|c| c.as_str()).collect();
        ids.sort_unstable();
        ids.dedup();
        assert_eq!(ids.len(), all.len());
        assert_eq!(serde_json::to_string(&CheckId::IrqOffNode).unwrap(), "\"irq-off-node\"");
    }
}
