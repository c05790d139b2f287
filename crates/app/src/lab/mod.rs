//! `lab`: reproduce false sharing, lock scaling and the remote-global bug
//! on this machine, scaled to its CPUs and nodes, from a plain request to
//! the document report renders: [`false_sharing`], [`locks`] and
//! [`remote_global`], one `run` each.
//!
//! This module is what the three experiments share: it turns a request
//! into thread counts and CPU orders this machine can honour, refusing
//! oversubscription unless asked (spinning waiters would fight the lock
//! holder for the CPU), and it says how the run was sampled.

mod error;
pub mod false_sharing;
pub mod locks;
pub mod remote_global;

use std::time::Duration;

pub use error::LabError;
use numasleuth_analyze::lab::documents::RunInfo;
use numasleuth_analyze::lab::Raw;
use numasleuth_kernel::IdList;
use numasleuth_measure::lab::grid::Sampling;
use numasleuth_measure::lab::{Budget, RunSample};
use numasleuth_model::lab::Placement;

use crate::limits::{self, OutOfRange};
use crate::machine::Machine;

/// The thread counts an experiment runs.
#[derive(Debug, Clone, Default, PartialEq)]
pub enum Threads {
    /// 1, 2, 4, … and every CPU.
    #[default]
    Sweep,
    /// One count (`--threads`).
    One(u32),
    /// Once per count in this list (`--thread-sweep`).
    Counts(IdList),
}

/// What every experiment's request holds, each value already checked for
/// form.
#[derive(Debug, Clone)]
pub struct LabRequest {
    /// Only these CPUs, in placement order; default every CPU this
    /// process may use.
    pub cpus: Option<IdList>,
    pub threads: Threads,
    /// Samples kept per configuration (a warm-up sample is dropped).
    pub samples: u32,
    /// Length of one sample.
    pub sample_ms: u64,
    /// Allow more threads than CPUs.
    pub oversubscribe: bool,
}

/// The machine narrowed to the request's CPUs, once the request's values
/// are found within their limits.
fn narrowed(mut machine: Machine, common: &LabRequest) -> Result<Machine, LabError> {
    check(common)?;
    machine.restrict_cpus(common.cpus.as_ref())?;
    Ok(machine)
}

/// The request's values within their limits, before anything runs.
fn check(common: &LabRequest) -> Result<(), OutOfRange> {
    limits::sampling(Some(common.samples), Some(common.sample_ms))?;
    let counts: Vec<u32> = match &common.threads {
        Threads::Sweep => Vec::new(),
        Threads::One(count) => vec![*count],
        Threads::Counts(list) => {
            limits::list_len("the thread sweep", list.len(), limits::LIST_MAX)?;
            list.iter().collect()
        }
    };
    let most = limits::THREADS_MAX;
    counts
        .into_iter()
        .try_for_each(|count| limits::count("a thread count", count, (1, most)))
}

/// The thread counts to run on `available` CPUs (of `node`, when one
/// node's), and whether any exceeds them (allowed only when the request
/// says oversubscribe).
fn thread_counts(common: &LabRequest, available: &[u32], node: Option<u32>) -> Result<(Vec<usize>, bool), LabError> {
    let n = available.len();
    let counts: Vec<usize> = match &common.threads {
        Threads::One(count) => vec![*count as usize],
        Threads::Counts(list) => list.iter().map(|c| c as usize).collect(),
        Threads::Sweep => {
            let mut counts: Vec<usize> = std::iter::successors(Some(1usize), |c| c.checked_mul(2))
                .take_while(|c| *c < n)
                .collect();
            counts.push(n.max(1));
            counts
        }
    };
    let most = counts.iter().copied().max().unwrap_or(1);
    if most > n && !common.oversubscribe {
        return Err(LabError::TooManyThreads {
            threads: most,
            cpus: available.to_vec(),
            node,
        });
    }
    Ok((counts, most > n))
}

/// Placements to run: as asked, or both where there is more than one
/// node to alternate between.
fn placements(machine: &Machine, asked: &[Placement]) -> (Vec<Placement>, Vec<String>) {
    let nodes_with_cpus = machine
        .topo
        .nodes
        .iter()
        .filter(|n| !machine.cpus_of(n.id).is_empty())
        .count();
    let mut warnings = Vec::new();
    let chosen = if asked.is_empty() {
        if nodes_with_cpus > 1 {
            vec![Placement::Compact, Placement::Spread]
        } else {
            vec![Placement::Compact]
        }
    } else {
        let mut chosen: Vec<Placement> = Vec::new();
        for placement in asked {
            if !chosen.contains(placement) {
                chosen.push(*placement);
            }
        }
        if nodes_with_cpus <= 1 && chosen.contains(&Placement::Spread) {
            warnings.push(
                "this process's CPUs are all on one node, so spread placement uses the same CPUs as compact".into(),
            );
        }
        chosen
    };
    (chosen, warnings)
}

/// Allowed CPUs in placement order: compact fills each node before the
/// next; spread takes one CPU from each node in turn.
fn cpu_order(machine: &Machine, placement: Placement) -> Vec<u32> {
    let per_node: Vec<Vec<u32>> = machine
        .topo
        .nodes
        .iter()
        .map(|n| machine.cpus_of(n.id))
        .filter(|cpus| !cpus.is_empty())
        .collect();
    let mut order: Vec<u32> = match placement {
        Placement::Compact => per_node.concat(),
        Placement::Spread => {
            let longest = per_node.iter().map(Vec::len).max().unwrap_or(0);
            (0..longest)
                .flat_map(|i| per_node.iter().filter_map(move |cpus| cpus.get(i).copied()))
                .collect()
        }
    };
    // CPUs the node files do not list (no NUMA sysfs) still run, last.
    for cpu in machine.allowed_cpus.iter() {
        if !order.contains(&cpu) {
            order.push(cpu);
        }
    }
    order
}

/// A placement with the allowed CPUs in its order.
type Order = (Placement, Vec<u32>);

/// Each placement with the allowed CPUs in its order, and the node of
/// the first placement's first CPU, where the shared memory is bound.
fn orders(machine: &Machine, placements: &[Placement]) -> Result<(Vec<Order>, u32), LabError> {
    let orders: Vec<Order> = placements.iter().map(|&p| (p, cpu_order(machine, p))).collect();
    let node = machine.cpu_home_node(orders[0].1[0])?;
    Ok((orders, node))
}

/// How long and how often each configuration is sampled.
fn sampling(common: &LabRequest) -> Sampling {
    Sampling {
        budget: Budget::Time(Duration::from_millis(common.sample_ms)),
        samples: common.samples as usize,
    }
}

fn raw(samples: Vec<RunSample>) -> Vec<Raw> {
    samples
        .into_iter()
        .map(|s| Raw {
            span_ns: s.span_ns,
            ops_per_thread: s.ops_per_thread,
            cpu_ns_per_thread: s.cpu_ns_per_thread,
        })
        .collect()
}

fn run_info(machine: &Machine, common: &LabRequest, oversubscribed: bool) -> RunInfo {
    RunInfo {
        cpu_model: machine.topo.cpu_name().map(str::to_string),
        nodes: machine.topo.nodes.iter().map(|n| n.id).collect(),
        allowed_cpus: machine.allowed_cpus.iter().collect(),
        samples_per_config: common.samples as usize,
        sample_ms: common.sample_ms,
        oversubscribed,
    }
}
