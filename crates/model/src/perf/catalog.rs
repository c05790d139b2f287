//! The generic events every Linux kernel defines (`include/uapi/linux/
//! perf_event.h`), named as the perf tool names them so a user can compare
//! with `perf stat`. Whether the CPU (or the hypervisor) backs them is only
//! known by trying to open them.

use super::pmu::EventSpec;

/// `perf_event_attr.type` values fixed by the ABI.
pub const TYPE_HARDWARE: u32 = 0;
pub const TYPE_SOFTWARE: u32 = 1;
pub const TYPE_HW_CACHE: u32 = 3;

/// The `pmu` label of each generic group in reports and JSON.
pub const PMU_HARDWARE: &str = "hardware";
pub const PMU_HW_CACHE: &str = "hw-cache";
pub const PMU_SOFTWARE: &str = "software";

/// `PERF_COUNT_HW_*`, in ABI order.
const HARDWARE: [&str; 10] = [
    "cycles",
    "instructions",
    "cache-references",
    "cache-misses",
    "branches",
    "branch-misses",
    "bus-cycles",
    "stalled-cycles-frontend",
    "stalled-cycles-backend",
    "ref-cycles",
];

/// `PERF_COUNT_SW_*` that count (DUMMY, BPF_OUTPUT and CGROUP_SWITCHES are
/// left out: the first two never count, the last only says something for
/// cgroup-wide events).
const SOFTWARE: [(&str, u64); 9] = [
    ("cpu-clock", 0),
    ("task-clock", 1),
    ("page-faults", 2),
    ("context-switches", 3),
    ("cpu-migrations", 4),
    ("minor-faults", 5),
    ("major-faults", 6),
    ("alignment-faults", 7),
    ("emulation-faults", 8),
];

/// `PERF_COUNT_HW_CACHE_*` ids with perf's names.
const CACHES: [&str; 7] = ["L1-dcache", "L1-icache", "LLC", "dTLB", "iTLB", "branch", "node"];
/// `PERF_COUNT_HW_CACHE_OP_*`.
const OPS: [&str; 3] = ["load", "store", "prefetch"];

fn generic(name: String, pmu: &str, type_id: u32, config: u64) -> EventSpec {
    EventSpec {
        name,
        pmu: pmu.to_string(),
        type_id,
        config,
        config1: 0,
        config2: 0,
        config3: 0,
    }
}

/// Every generic hardware, cache and software event: 10 + 42 + 9.
pub fn generic_events() -> Vec<EventSpec> {
    let mut events: Vec<EventSpec> = HARDWARE
        .iter()
        .zip(0u64..)
        .map(|(name, config)| generic(name.to_string(), PMU_HARDWARE, TYPE_HARDWARE, config))
        .collect();
    for (cache, id) in CACHES.iter().zip(0u64..) {
        for (op, op_id) in OPS.iter().zip(0u64..) {
            // perf's names: L1-dcache-loads, L1-dcache-load-misses, …
            let plural = if *op == "prefetch" {
                "prefetches".to_string()
            } else {
                format!("{op}s")
            };
            for (result, result_id) in [(plural, 0u64), (format!("{op}-misses"), 1)] {
                let config = id | (op_id << 8) | (result_id << 16);
                events.push(generic(
                    format!("{cache}-{result}"),
                    PMU_HW_CACHE,
                    TYPE_HW_CACHE,
                    config,
                ));
            }
        }
    }
    events.extend(
        SOFTWARE
            .iter()
            .map(|(name, config)| generic(name.to_string(), PMU_SOFTWARE, TYPE_SOFTWARE, *config)),
    );
    events
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_configs_follow_the_abi() {
        let events = generic_events();
        assert_eq!(events.len(), 10 + 42 + 9);
        let find = |name: &str| events.iter().find(|e| e.name == name).unwrap();
        assert_eq!((find("instructions").type_id, find("instructions").config), (0, 1));
        assert_eq!(find("ref-cycles").config, 9);
        // LL (2), write (1), miss (1).
        assert_eq!(find("LLC-store-misses").config, 2 | (1 << 8) | (1 << 16));
        assert_eq!(find("L1-dcache-prefetches").config, 2 << 8);
        assert_eq!(find("node-load-misses").config, 6 | (1 << 16));
        assert_eq!((find("task-clock").type_id, find("task-clock").config), (1, 1));
        assert_eq!(find("major-faults").config, 6);
        let mut names: Vec<&str> = events.iter().map(|e| e.name.as_str()).collect();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), events.len(), "names are unique");
    }
}
