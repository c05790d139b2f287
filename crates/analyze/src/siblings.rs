//! The topology as measured against the topology as declared: two CPUs
//! that pass a cache line far faster than their neighbours behave like two
//! threads of one core, whatever the kernel says.
//!
//! On a VM the kernel sees what the hypervisor declares, often "16 cores of
//! one thread", while vCPUs may sit on two hyperthreads of one physical
//! core. lstopo and numactl show only the declaration; the core-to-core
//! matrix shows the truth. A pair is suspected when its median is below
//! [`SIBLING_RATIO`]× the median of the other pairs of its kind (sharing
//! the same last-level cache, else the same package, else neither, so a
//! second socket's slower pairs never make one socket's pairs look fast)
//! and the declared topology does not put the two on one core.
//!
//! Hyperthreads pair off: a CPU has one sibling (two-way SMT), so fast
//! pairs that share a CPU (0↔1 and 1↔2, or 15 with everyone) are not
//! siblings. On a real 16-vCPU cloud VM a plain ping-pong harness measured
//! the first pair after each change of the pinned CPU at a third of the
//! others, in whichever order the pairs were taken (fixtures
//! `c2c_vm16_order_*`): a chain or a star of fast pairs, never a matching.
//! Such pairs are left out and said to be left out, not reported as
//! siblings.

use numasleuth_model::Topology;
use serde::Serialize;

use crate::cpu_sample::core_key;
use crate::doctor::CheckId;
use crate::evidence::Evidence;
use crate::findings::{Finding, Severity};
use crate::stats::Summary;

/// A pair faster than this share of its kind's median is suspected.
pub const SIBLING_RATIO: f64 = 0.4;
/// A suspected pair's CPUs must have no other pair below this share of
/// the median: siblings pair off, with a margin so that a chain of fast
/// pairs the threshold happens to cut (80 and 73 and 81 ns against a
/// median of 198) is not taken for one isolated pair.
pub const NEIGHBOUR_RATIO: f64 = 0.5;
/// Fewer other pairs of a kind than this give no median worth trusting.
pub const MIN_OTHER_PAIRS: usize = 5;
/// Where c2c's figures come from, in evidence.
pub const MEASURED_C2C: &str = "measured:c2c";

/// A pair that answers like two threads of one core.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SuspectedSiblings {
    pub cpus: [u32; 2],
    pub latency_ns: f64,
    /// The median of the other pairs of the same kind.
    pub median_ns: f64,
    /// What the pair and the pairs it is compared with share.
    pub kind: PairKind,
    pub message: String,
}

/// What two CPUs share by the declared topology; serialised as `shared L3`
/// (the level of the last cache), `same package` or `across packages`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PairKind {
    SharedCache { level: u32 },
    SamePackage,
    AcrossPackages,
}

impl std::fmt::Display for PairKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            PairKind::SharedCache { level } => write!(f, "shared L{level}"),
            PairKind::SamePackage => f.write_str("same package"),
            PairKind::AcrossPackages => f.write_str("across packages"),
        }
    }
}

impl Serialize for PairKind {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

/// What two CPUs share, by the declared topology: the same last-level
/// cache (which), else the same package (which), else nothing.
fn kind_of(topo: &Topology, a: u32, b: u32) -> (u8, u32, PairKind) {
    let data = || topo.caches.iter().filter(|c| c.kind.holds_data());
    let top = data().map(|c| c.level).max();
    let shared = data()
        .filter(|c| Some(c.level) == top)
        .position(|c| c.cpus.contains(a) && c.cpus.contains(b));
    if let (Some(index), Some(level)) = (shared, top) {
        return (0, index as u32, PairKind::SharedCache { level });
    }
    let package = |cpu: u32| topo.cpus.iter().find(|c| c.id == cpu).and_then(|c| c.package);
    match (package(a), package(b)) {
        (Some(p), Some(q)) if p == q => (1, p, PairKind::SamePackage),
        _ => (2, 0, PairKind::AcrossPackages),
    }
}

fn declared_one_core(topo: &Topology, a: u32, b: u32) -> bool {
    let (ka, kb) = (core_key(topo, a), core_key(topo, b));
    ka.0 < 2 && ka == kb
}

/// One measured pair: (median ns, CPU, CPU).
type Pair = (f64, u32, u32);

/// The median of `sorted` without its element at `skip`.
fn median_without(sorted: &[f64], skip: usize) -> f64 {
    let rest: Vec<f64> = sorted
        .iter()
        .enumerate()
        .filter(|(i, _)| *i != skip)
        .map(|(_, v)| *v)
        .collect();
    crate::stats::quantile(&rest, 0.5)
}

/// The suspected pairs, and what was left out.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SiblingCheck {
    pub pairs: Vec<SuspectedSiblings>,
    /// Fast pairs that share a CPU with another fast pair, so are not
    /// hyperthread siblings; a sentence for people when there are any.
    pub left_out: Option<String>,
}

/// Each pair's median latency from a c2c matrix of summaries, the grid
/// [`suspected`] and [`check`] compare (`None` where a pair has none):
/// `c2c` and `doctor --measure` derive it the same way.
pub fn pair_medians(matrix: &[Vec<Option<Summary>>]) -> Vec<Vec<Option<f64>>> {
    matrix
        .iter()
        .map(|row| row.iter().map(|c| c.map(|s| s.median)).collect())
        .collect()
}

/// Every suspected pair of a measured matrix: `cpus[i]` against `cpus[j]`
/// is `medians[i][j]` in ns (symmetric, `None` where not measured).
pub fn suspected(topo: &Topology, cpus: &[u32], medians: &[Vec<Option<f64>>]) -> Vec<SuspectedSiblings> {
    check(topo, cpus, medians).pairs
}

/// [`suspected`] with the note on fast pairs that do not pair off.
pub fn check(topo: &Topology, cpus: &[u32], medians: &[Vec<Option<f64>>]) -> SiblingCheck {
    let fast = fast_pairs(topo, cpus, medians, SIBLING_RATIO);
    let mut seen: std::collections::BTreeMap<u32, usize> = Default::default();
    for pair in fast_pairs(topo, cpus, medians, NEIGHBOUR_RATIO) {
        for cpu in pair.cpus {
            *seen.entry(cpu).or_default() += 1;
        }
    }
    let alone = |p: &SuspectedSiblings| p.cpus.iter().all(|c| seen.get(c) == Some(&1));
    let (pairs, shared): (Vec<_>, Vec<_>) = fast.into_iter().partition(alone);
    let crowded: Vec<u32> = shared
        .iter()
        .flat_map(|p| p.cpus)
        .filter(|c| seen.get(c).is_some_and(|n| *n > 1))
        .collect::<std::collections::BTreeSet<u32>>()
        .into_iter()
        .collect();
    let left_out = (!shared.is_empty()).then(|| {
        format!(
            "{} pair(s) answered below {SIBLING_RATIO}× the median of their kind, but CPU(s) {} answered below \
             {NEIGHBOUR_RATIO}× with more than one other CPU: hyperthreads pair off, so these are not reported as \
             siblings (the order the pairs were measured in, or a busy host, can make such a pattern; measure again)",
            shared.len(),
            numasleuth_parse::human_list(&crowded)
        )
    });
    SiblingCheck { pairs, left_out }
}

/// Pairs below [`SIBLING_RATIO`]× their kind's median that the kernel
/// declares on separate cores, each CPU counted in as many as it is in.
fn fast_pairs(topo: &Topology, cpus: &[u32], medians: &[Vec<Option<f64>>], ratio: f64) -> Vec<SuspectedSiblings> {
    // Pairs declared on separate cores, grouped by what they share.
    let mut kinds: std::collections::BTreeMap<(u8, u32), (PairKind, Vec<Pair>)> = Default::default();
    for (i, &a) in cpus.iter().enumerate() {
        for (j, &b) in cpus.iter().enumerate().skip(i + 1) {
            let Some(ns) = medians.get(i).and_then(|row| row.get(j)).copied().flatten() else {
                continue;
            };
            if !ns.is_finite() || declared_one_core(topo, a, b) {
                continue;
            }
            let (rank, which, name) = kind_of(topo, a, b);
            kinds
                .entry((rank, which))
                .or_insert_with(|| (name, Vec::new()))
                .1
                .push((ns, a, b));
        }
    }
    let mut found = Vec::new();
    for (name, mut pairs) in kinds.into_values() {
        if pairs.len() <= MIN_OTHER_PAIRS {
            continue;
        }
        pairs.sort_by(|x, y| x.0.total_cmp(&y.0));
        let sorted: Vec<f64> = pairs.iter().map(|p| p.0).collect();
        for (k, &(ns, a, b)) in pairs.iter().enumerate() {
            let median_ns = median_without(&sorted, k);
            if ns >= ratio * median_ns {
                // Sorted ascending: no later pair can be faster.
                break;
            }
            found.push(SuspectedSiblings {
                cpus: [a, b],
                latency_ns: ns,
                median_ns,
                message: message([a, b], ns, median_ns, name),
                kind: name,
            });
        }
    }
    found.sort_by_key(|s| s.cpus);
    found
}

/// The sentence for one suspected pair; `kind` as in [`SuspectedSiblings`].
pub fn message([a, b]: [u32; 2], latency_ns: f64, median_ns: f64, kind: PairKind) -> String {
    let others = match kind {
        PairKind::SharedCache { level } => format!("sharing their L{level}"),
        PairKind::SamePackage => "in their package".to_string(),
        PairKind::AcrossPackages => kind.to_string(),
    };
    format!(
        "CPUs {a} and {b} answer in {latency_ns:.1} ns, like two threads of one core (median {median_ns:.0} ns of the \
         other pairs {others}), but the kernel declares them separate cores: on a VM, the vCPUs are likely on \
         sibling hyperthreads; pin latency-critical threads apart"
    )
}

/// `doctor --measure`'s finding over the suspected pairs; none when there
/// are none.
pub fn finding(pairs: &[SuspectedSiblings]) -> Option<Finding> {
    if pairs.is_empty() {
        return None;
    }
    let evidence = pairs
        .iter()
        .map(|p| {
            Evidence::new(MEASURED_C2C, p.message.clone())
                .with("cpus", &p.cpus[..])
                .with("latency_ns", p.latency_ns)
                .with("median_ns", p.median_ns)
                .with("ratio", p.latency_ns / p.median_ns)
        })
        .collect();
    let listed: Vec<String> = pairs.iter().map(|p| format!("{}↔{}", p.cpus[0], p.cpus[1])).collect();
    Some(Finding {
        id: CheckId::VcpuSiblings.as_str(),
        severity: Severity::Warning,
        confidence: None,
        title: format!(
            "CPUs declared as separate cores behave like one core's hyperthreads ({})",
            listed.join(", ")
        ),
        evidence,
        remedy: "Two threads pinned to such a pair share one core's execution units and caches: pin \
                 latency-critical threads so no two use the same pair (leave one CPU of each pair out of their \
                 taskset/numactl list), and on a VM ask for a topology that declares SMT (e.g. threads per core 2), \
                 so the kernel's scheduler and every tool see it. `numasleuth c2c` shows the whole matrix."
            .into(),
        incident: None,
        explains: Vec::new(),
    })
}

/// [`finding`] with its confidence, from the cells of the suspected pairs
/// in `matrix` (`cpus[i]` against `cpus[j]`, as [`suspected`] reads it):
/// at most INFO when a suspected pair's own timing was too noisy to hold.
/// The median each pair is compared with is over many pairs, so its noise
/// is not counted.
pub fn measured_finding(
    topo: &Topology,
    pairs: &[SuspectedSiblings],
    cpus: &[u32],
    matrix: &[Vec<Option<Summary>>],
) -> Option<Finding> {
    let index = |cpu: u32| cpus.iter().position(|c| *c == cpu);
    let cells = pairs.iter().filter_map(|p| {
        let (i, j) = (index(p.cpus[0])?, index(p.cpus[1])?);
        matrix.get(i)?.get(j)?.as_ref()
    });
    let confidence = crate::confidence::Confidence::of(cells);
    let found = finding(pairs).map(|f| crate::confidence::qualify(f, confidence, MEASURED_C2C));
    // An emulated CPU's core-to-core timings are the emulator's threads.
    found.map(|f| {
        if topo.cpu_is_emulated() {
            crate::confidence::emulated(f)
        } else {
            f
        }
    })
}

#[cfg(test)]
#[path = "siblings_tests.rs"]
mod tests;
