//! Which CPUs stand for the machine when measuring every pair would take
//! too long (`c2c --sample`): one per core, per last-level cache domain or
//! per node, decided from the topology alone.

use std::collections::BTreeSet;

use numasleuth_model::Topology;

/// Above this many CPUs, [`CpuSample::Auto`] keeps one per cache domain.
pub const AUTO_ALL_LIMIT: usize = 64;

/// How to thin a CPU list.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CpuSample {
    /// Every CPU up to [`AUTO_ALL_LIMIT`], else one per cache domain.
    Auto,
    All,
    /// One per physical core (SMT siblings dropped).
    Core,
    /// One per last-level (data or unified) cache domain.
    Cache,
    Node,
}

/// The CPUs kept from `cpus` (in their order), and the mode's name for
/// the output ("all", "core", "cache" or "node").
pub fn sample_cpus(topo: &Topology, cpus: Vec<u32>, mode: CpuSample) -> (Vec<u32>, &'static str) {
    match mode {
        CpuSample::Auto if cpus.len() <= AUTO_ALL_LIMIT => (cpus, "all"),
        CpuSample::All => (cpus, "all"),
        CpuSample::Core => (first_per(cpus, |cpu| core_key(topo, cpu)), "core"),
        // A CPU whose node is unknown stands for itself: it is never put
        // on node 0.
        CpuSample::Node => {
            let key = |cpu: u32| topo.node_of_cpu(cpu).map_or((1, cpu), |node| (0, node));
            (first_per(cpus, key), "node")
        }
        CpuSample::Cache | CpuSample::Auto => {
            let data = || topo.caches.iter().filter(|c| c.kind.holds_data());
            let top = data().map(|c| c.level).max();
            let domains: Vec<_> = data().filter(|c| Some(c.level) == top).collect();
            let key = |cpu: u32| {
                domains
                    .iter()
                    .position(|d| d.cpus.contains(cpu))
                    .map_or((1, cpu), |d| (0, d as u32))
            };
            (first_per(cpus, key), "cache")
        }
    }
}

/// Same key for SMT siblings: the first sibling when the kernel lists
/// them, else (package, core), else the CPU itself.
pub(crate) fn core_key(topo: &Topology, cpu: u32) -> (u8, u32, u32) {
    match topo.cpus.iter().find(|c| c.id == cpu) {
        Some(c) => match (&c.thread_siblings, c.package, c.core) {
            (Some(siblings), _, _) if !siblings.is_empty() => (0, siblings.ids()[0], 0),
            (_, Some(package), Some(core)) => (1, package, core),
            _ => (2, cpu, 0),
        },
        None => (2, cpu, 0),
    }
}

/// Keeps the first CPU of each group that `key` puts it in.
fn first_per<K: Ord>(cpus: Vec<u32>, key: impl Fn(u32) -> K) -> Vec<u32> {
    let mut seen = BTreeSet::new();
    cpus.into_iter().filter(|&cpu| seen.insert(key(cpu))).collect()
}

#[cfg(test)]
mod tests {
    use numasleuth_model::{CacheDomain, Cpu};
    use numasleuth_parse::IdList;

    use super::*;

    /// Two nodes, two cores per node, two SMT threads per core
    /// (siblings 0,4 1,5 2,6 3,7), one L3 per node.
    fn machine() -> Topology {
        let cpus = (0..8)
            .map(|id| Cpu {
                id,
                node: Some((id % 4) / 2),
                online: true,
                thread_siblings: Some(IdList::new(vec![id % 4, id % 4 + 4])),
                ..Cpu::default()
            })
            .collect();
        let cache = |level, kind: &str, cpus: Vec<u32>| CacheDomain {
            level,
            kind: kind.into(),
            size_bytes: None,
            line_size_bytes: Some(64),
            cpus: IdList::new(cpus),
        };
        Topology {
            cpus,
            caches: vec![
                cache(1, "Instruction", vec![0, 4]),
                cache(3, "Unified", vec![0, 1, 4, 5]),
                cache(3, "Unified", vec![2, 3, 6, 7]),
            ],
            ..Topology::default()
        }
    }

    #[test]
    fn each_mode_keeps_the_first_cpu_of_each_group() {
        let topo = machine();
        let all: Vec<u32> = (0..8).collect();
        assert_eq!(sample_cpus(&topo, all.clone(), CpuSample::All), (all.clone(), "all"));
        assert_eq!(sample_cpus(&topo, all.clone(), CpuSample::Auto), (all.clone(), "all"));
        assert_eq!(
            sample_cpus(&topo, all.clone(), CpuSample::Core),
            (vec![0, 1, 2, 3], "core")
        );
        assert_eq!(sample_cpus(&topo, all.clone(), CpuSample::Cache), (vec![0, 2], "cache"));
        assert_eq!(sample_cpus(&topo, all.clone(), CpuSample::Node), (vec![0, 2], "node"));
        assert_eq!(
            sample_cpus(&topo, vec![5, 1, 4, 0], CpuSample::Core),
            (vec![5, 4], "core")
        );
    }

    #[test]
    fn auto_samples_by_cache_above_the_limit_and_unknown_cpus_stand_alone() {
        let topo = machine();
        let many: Vec<u32> = (0..=AUTO_ALL_LIMIT as u32).collect();
        let (kept, mode) = sample_cpus(&topo, many, CpuSample::Auto);
        assert_eq!(mode, "cache");
        // CPUs 8 and up are in no cache domain the kernel listed: each is kept.
        assert_eq!(kept.len(), 2 + (AUTO_ALL_LIMIT + 1 - 8));
        assert_eq!(&kept[..3], &[0, 2, 8]);
        assert_eq!(topo.node_of_cpu(6), Some(1));
        // By node, CPUs 8 and up (no node says them) are each kept too:
        // none is folded into node 0.
        let (kept, _) = sample_cpus(&topo, vec![0, 8, 1, 9, 4], CpuSample::Node);
        assert_eq!(kept, [0, 8, 9]);
    }
}
