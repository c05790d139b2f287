//! Reading `procfs::settings`; its format, types and parser are `numasleuth_parse::procfs::settings`.

pub use numasleuth_parse::procfs::settings::*;

use crate::error::ReadError;
use crate::read;
use crate::root::Root;
use crate::sysfs::node::parse_counters;
use crate::unread::Gaps;
use std::collections::BTreeMap;

/// Every knob, each on its own: an unusable file is noted in `gaps` and
/// read as absent, so the checks that need the others still run.
pub fn read(root: &Root, gaps: &mut Gaps) -> Settings {
    let mut number = |path: &str| gaps.keep(read::number(root, path));
    let (numa_balancing, zone_reclaim_mode, min_free_kbytes, watermark_scale_factor) = (
        number("proc/sys/kernel/numa_balancing"),
        number("proc/sys/vm/zone_reclaim_mode"),
        number("proc/sys/vm/min_free_kbytes"),
        number("proc/sys/vm/watermark_scale_factor"),
    );
    Settings {
        numa_balancing,
        zone_reclaim_mode,
        min_free_kbytes,
        watermark_scale_factor,
        thp_enabled: gaps.keep(read::parsed(
            root,
            "sys/kernel/mm/transparent_hugepage/enabled",
            parse_thp_mode,
        )),
        thp_defrag: gaps.keep(read::parsed(
            root,
            "sys/kernel/mm/transparent_hugepage/defrag",
            parse_thp_mode,
        )),
        swap_areas: gaps.keep(read::parsed(root, "proc/swaps", parse_swaps)),
        kernel_cmdline: gaps
            .keep(root.read_optional("proc/cmdline"))
            .map(|t| t.trim().to_string()),
    }
}

/// `vm.zone_reclaim_mode` alone, for samplers that read it every tick;
/// `None` on a kernel without it.
pub fn read_zone_reclaim_mode(root: &Root) -> Result<Option<u64>, ReadError> {
    read::number(root, "proc/sys/vm/zone_reclaim_mode")
}

/// `kernel.numa_balancing` (AutoNUMA's mode: 0 off, 1 on, 2 tiering);
/// `None` on a kernel without it.
pub fn read_numa_balancing(root: &Root) -> Result<Option<u64>, ReadError> {
    read::number(root, "proc/sys/kernel/numa_balancing")
}

/// Whether AutoNUMA is on; `false` when the kernel has no such knob or it
/// cannot be read.
pub fn numa_balancing_on(root: &Root) -> bool {
    matches!(read_numa_balancing(root), Ok(Some(mode)) if mode != 0)
}

/// `kernel.perf_event_paranoid` (-1 to 4; it decides which perf events an
/// unprivileged user may open); `None` when absent or unreadable, as the
/// callers only quote it in an explanation.
pub fn perf_event_paranoid(root: &Root) -> Option<i32> {
    root.read("proc/sys/kernel/perf_event_paranoid")
        .ok()?
        .trim()
        .parse()
        .ok()
}

/// All of `/proc/vmstat`; callers pick the reclaim, compaction, `numa_*`,
/// `pgmigrate*` and `numa_hint*` counters they need.
pub fn read_vmstat(root: &Root) -> Result<BTreeMap<String, u64>, ReadError> {
    let text = root.read(VMSTAT)?;
    parse_counters(&text).map_err(|e| ReadError::malformed(VMSTAT, e.0))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn per_tick_knobs() {
        let dir = tempfile::tempdir().unwrap();
        let root = Root::directory(dir.path()).unwrap();
        assert_eq!(read_zone_reclaim_mode(&root).unwrap(), None);
        assert!(!numa_balancing_on(&root));
        std::fs::create_dir_all(dir.path().join("proc/sys/vm")).unwrap();
        std::fs::create_dir_all(dir.path().join("proc/sys/kernel")).unwrap();
        std::fs::write(dir.path().join("proc/sys/vm/zone_reclaim_mode"), "1\n").unwrap();
        std::fs::write(dir.path().join("proc/sys/kernel/numa_balancing"), "2\n").unwrap();
        assert_eq!(read_zone_reclaim_mode(&root).unwrap(), Some(1));
        assert!(numa_balancing_on(&root));
        std::fs::write(dir.path().join("proc/sys/kernel/numa_balancing"), "0\n").unwrap();
        assert!(!numa_balancing_on(&root));
        std::fs::write(dir.path().join("proc/sys/vm/zone_reclaim_mode"), "on\n").unwrap();
        assert!(read_zone_reclaim_mode(&root).is_err());
        assert_eq!(perf_event_paranoid(&root), None);
        std::fs::write(dir.path().join("proc/sys/kernel/perf_event_paranoid"), "-1\n").unwrap();
        assert_eq!(perf_event_paranoid(&root), Some(-1));
    }
}
