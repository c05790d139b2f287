//! Rates between two readings of kernel counters (`top`'s per-refresh
//! figures): a counter's increase per second, and the busy share of a set
//! of CPUs from /proc/stat ticks.

use std::collections::BTreeMap;

use numasleuth_parse::procfs::stat::CpuTicks;
use numasleuth_parse::IdList;

/// Busy share of the CPUs in `cpus` between two readings; `None` when no
/// tick passed (or none of the CPUs has a line, e.g. all offline). A
/// counter that went backwards (a CPU re-onlined) counts as no time.
pub fn cpu_util_percent(before: &BTreeMap<u32, CpuTicks>, now: &BTreeMap<u32, CpuTicks>, cpus: &IdList) -> Option<f64> {
    let (mut busy, mut total) = (0u64, 0u64);
    for cpu in cpus.iter() {
        let (Some(a), Some(b)) = (before.get(&cpu), now.get(&cpu)) else {
            continue;
        };
        let db = b.busy.saturating_sub(a.busy);
        busy = busy.saturating_add(db);
        total = total.saturating_add(db).saturating_add(b.idle.saturating_sub(a.idle));
    }
    (total > 0).then(|| busy as f64 / total as f64 * 100.0)
}

/// A counter's increase per second over `dt_s`; `None` without both
/// readings. A counter that went backwards (reset) reads as 0.
pub fn per_sec(now: Option<u64>, before: Option<u64>, dt_s: f64) -> Option<f64> {
    Some(now?.saturating_sub(before?) as f64 / dt_s)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ticks(list: &[(u32, u64, u64)]) -> BTreeMap<u32, CpuTicks> {
        list.iter()
            .map(|&(cpu, busy, idle)| (cpu, CpuTicks { busy, idle }))
            .collect()
    }

    #[test]
    fn utilisation_is_over_the_nodes_cpus_only() {
        let before = ticks(&[(0, 100, 100), (1, 100, 100), (2, 0, 0)]);
        let now = ticks(&[(0, 150, 150), (1, 200, 100), (2, 1000, 0)]);
        let node0 = IdList::parse("0-1").unwrap();
        assert_eq!(cpu_util_percent(&before, &now, &node0), Some(75.0));
        assert_eq!(cpu_util_percent(&before, &before, &node0), None);
        assert_eq!(cpu_util_percent(&before, &now, &IdList::parse("7").unwrap()), None);
        assert_eq!(cpu_util_percent(&now, &before, &node0), None);
    }

    #[test]
    fn rates_need_both_readings_and_never_go_negative() {
        assert_eq!(per_sec(Some(300), Some(100), 2.0), Some(100.0));
        assert_eq!(per_sec(Some(100), Some(300), 2.0), Some(0.0));
        assert_eq!(per_sec(None, Some(1), 1.0), None);
        assert_eq!(per_sec(Some(1), None, 1.0), None);
    }
}
