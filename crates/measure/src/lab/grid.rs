//! The lab's grids: every configuration of an experiment in turn, until a
//! stop request, each one run by its workload (`lock_bench`,
//! `false_sharing`, `remote_global`). The caller plans the grid (thread
//! counts, CPU orders) and watches each step; the raw outcomes come back
//! for `numasleuth-analyze` to turn into rows.

use numasleuth_model::lab::{Global, Layout, Load, LockKind, Op, Placement};
use numasleuth_model::stop::Stop;

use super::{false_sharing, lock_bench, remote_global, Budget};
use crate::c2c::{measure_pair, HomeLine, Method, PairConfig, PairSamples};
use crate::steps::{self, PhaseError, StepError};

/// The CPUs `threads` workers run on, worker `i` on entry `i` of `order`
/// (repeating when oversubscribed).
pub fn cpus_for(order: &[u32], threads: usize) -> Vec<u32> {
    order.iter().copied().cycle().take(threads).collect()
}

/// Every placement × first × second × thread count, nested in that order
/// (the last varies fastest), each made into a step with its CPUs: the
/// lock grid's loads and locks, the false-sharing grid's operations and
/// layouts.
fn placements_by<A: Copy, B: Copy, S>(
    orders: &[(Placement, Vec<u32>)],
    (first, second): (&[A], &[B]),
    counts: &[usize],
    step: impl Fn(Placement, (A, B), usize, Vec<u32>) -> S,
) -> Vec<S> {
    let mut steps = Vec::new();
    for (placement, order) in orders {
        for &a in first {
            for &b in second {
                for &threads in counts {
                    steps.push(step(*placement, (a, b), threads, cpus_for(order, threads)));
                }
            }
        }
    }
    steps
}

/// What every lab configuration shares.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Sampling {
    pub budget: Budget,
    pub samples: usize,
}

/// The lock grid: every placement × load × lock × thread count.
#[derive(Debug, Clone)]
pub struct LockGrid<'a> {
    /// Each placement with the allowed CPUs in its order.
    pub orders: &'a [(Placement, Vec<u32>)],
    pub kinds: &'a [LockKind],
    pub counts: &'a [usize],
    /// The node the lock's memory is bound to.
    pub node: u32,
    pub sampling: Sampling,
}

/// One configuration of the lock grid.
#[derive(Debug, Clone, PartialEq)]
pub struct LockStep {
    pub placement: Placement,
    pub load: Load,
    pub lock: LockKind,
    pub threads: usize,
    pub cpus: Vec<u32>,
}

impl LockGrid<'_> {
    pub fn steps(&self) -> Vec<LockStep> {
        placements_by(
            self.orders,
            (&Load::ALL, self.kinds),
            self.counts,
            |placement, (load, lock), threads, cpus| LockStep {
                placement,
                load,
                lock,
                threads,
                cpus,
            },
        )
    }

    /// Each configuration in turn until `stop`; `observe` sees each before
    /// it runs.
    pub fn run(
        &self,
        stop: &Stop,
        observe: &mut dyn FnMut(&LockStep),
    ) -> Result<Vec<(LockStep, lock_bench::Outcome)>, StepError<LockStep>> {
        steps::run(self.steps(), stop, observe, |step| {
            lock_bench::run(&lock_bench::Config {
                lock: step.lock,
                load: step.load,
                cpus: step.cpus.clone(),
                threads: step.threads,
                budget: self.sampling.budget,
                samples: self.sampling.samples,
                node: self.node,
            })
        })
    }
}

/// The false-sharing grid: every placement × operation × layout × thread
/// count.
#[derive(Debug, Clone)]
pub struct FalseSharingGrid<'a> {
    /// Each placement with the allowed CPUs in its order.
    pub orders: &'a [(Placement, Vec<u32>)],
    pub counts: &'a [usize],
    /// The node the counters' memory is bound to.
    pub node: u32,
    pub sampling: Sampling,
}

/// One configuration of the false-sharing grid.
#[derive(Debug, Clone, PartialEq)]
pub struct FalseSharingStep {
    pub placement: Placement,
    pub op: Op,
    pub layout: Layout,
    pub threads: usize,
    pub cpus: Vec<u32>,
}

impl FalseSharingGrid<'_> {
    pub fn steps(&self) -> Vec<FalseSharingStep> {
        placements_by(
            self.orders,
            (&Op::ALL, &Layout::ALL),
            self.counts,
            |placement, (op, layout), threads, cpus| FalseSharingStep {
                placement,
                op,
                layout,
                threads,
                cpus,
            },
        )
    }

    /// Each configuration in turn until `stop`; `observe` sees each before
    /// it runs.
    pub fn run(
        &self,
        stop: &Stop,
        observe: &mut dyn FnMut(&FalseSharingStep),
    ) -> Result<Vec<(FalseSharingStep, false_sharing::Outcome)>, StepError<FalseSharingStep>> {
        steps::run(self.steps(), stop, observe, |step| {
            false_sharing::run(&false_sharing::Config {
                layout: step.layout,
                op: step.op,
                cpus: step.cpus.clone(),
                threads: step.threads,
                budget: self.sampling.budget,
                samples: self.sampling.samples,
                node: self.node,
            })
        })
    }
}

/// The remote-global grid: every placement of the global × thread count,
/// on the workers' node.
#[derive(Debug, Clone)]
pub struct RemoteGlobalGrid<'a> {
    pub placements: &'a [Global],
    /// CPUs of the workers' node.
    pub cpus: &'a [u32],
    pub counts: &'a [usize],
    pub local_node: u32,
    pub remote_node: Option<u32>,
    pub writes_per_op: u32,
    pub sampling: Sampling,
}

/// One configuration of the remote-global grid.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RemoteGlobalStep {
    pub global: Global,
    pub threads: usize,
}

impl RemoteGlobalGrid<'_> {
    pub fn steps(&self) -> Vec<RemoteGlobalStep> {
        let mut steps = Vec::new();
        for &global in self.placements {
            for &threads in self.counts {
                steps.push(RemoteGlobalStep { global, threads });
            }
        }
        steps
    }

    /// Each configuration in turn until `stop`; `observe` sees each before
    /// it runs.
    pub fn run(
        &self,
        stop: &Stop,
        observe: &mut dyn FnMut(&RemoteGlobalStep),
    ) -> Result<Vec<(RemoteGlobalStep, remote_global::Outcome)>, StepError<RemoteGlobalStep>> {
        steps::run(self.steps(), stop, observe, |step| {
            remote_global::run(&remote_global::Config {
                global: step.global,
                cpus: self.cpus.to_vec(),
                threads: step.threads,
                local_node: self.local_node,
                remote_node: self.remote_node,
                writes_per_op: self.writes_per_op,
                budget: self.sampling.budget,
                samples: self.sampling.samples,
            })
        })
    }
}

/// One timed line transfer: the global's placement and the node the line
/// is homed on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TransferStep {
    pub global: Global,
    pub home_node: u32,
}

/// A CAS ping-pong between `cpus` on a line homed where each of `homes`
/// says, in turn until `stop`: the cost of one invalidation there.
pub fn time_transfers(
    homes: &[TransferStep],
    cpus: [u32; 2],
    (samples, transfers_per_sample): (usize, usize),
    stop: &Stop,
    observe: &mut dyn FnMut(&TransferStep),
) -> Result<Vec<(TransferStep, PairSamples)>, StepError<TransferStep, PhaseError>> {
    steps::run(homes.to_vec(), stop, observe, |step| {
        let line = HomeLine::allocate(step.home_node).map_err(PhaseError::Setup)?;
        let config = PairConfig {
            method: Method::Cas,
            cpu_a: cpus[0],
            cpu_b: cpus[1],
            samples,
            transfers_per_sample,
        };
        measure_pair(&line, config).map_err(PhaseError::Run)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn cpus() -> Vec<u32> {
        crate::affinity::allowed_cpus().unwrap()
    }

    fn quick() -> Sampling {
        Sampling {
            budget: Budget::Time(Duration::from_millis(1)),
            samples: 1,
        }
    }

    #[test]
    fn the_lock_grid_runs_every_configuration_in_order() {
        let orders = [(Placement::Compact, cpus())];
        let grid = LockGrid {
            orders: &orders,
            kinds: &[LockKind::Ticket, LockKind::Atomic],
            counts: &[1, 2],
            node: 0,
            sampling: quick(),
        };
        let mut seen = Vec::new();
        let done = grid.run(&Stop::new(), &mut |s| seen.push(s.clone())).unwrap();
        assert_eq!(seen.len(), Load::ALL.len() * 2 * 2);
        assert_eq!(seen, grid.steps());
        assert_eq!(done.iter().map(|d| d.0.clone()).collect::<Vec<_>>(), seen);
        // Each configuration kept its samples, one per thread.
        for (step, outcome) in &done {
            assert_eq!(outcome.samples.len(), 1);
            assert_eq!(outcome.samples[0].ops_per_thread.len(), step.threads);
            assert_eq!(step.cpus.len(), step.threads);
        }
    }

    #[test]
    fn a_stop_mid_grid_returns_the_configurations_measured() {
        let orders = [(Placement::Compact, cpus())];
        let grid = FalseSharingGrid {
            orders: &orders,
            counts: &[1, 2],
            node: 0,
            sampling: quick(),
        };
        let stop = Stop::new();
        let mut seen = 0;
        let done = grid
            .run(&stop, &mut |_| {
                seen += 1;
                if seen == 3 {
                    // Ctrl-C as the third configuration starts.
                    stop.request();
                }
            })
            .unwrap();
        assert_eq!(seen, 3);
        assert_eq!(done.len(), 3);
        assert_eq!(
            done.iter().map(|d| d.0.clone()).collect::<Vec<_>>(),
            grid.steps()[..3].to_vec()
        );
        assert!(done.iter().all(|(_, o)| o.samples.len() == 1));
    }

    #[test]
    fn a_failing_configuration_names_itself() {
        let grid = RemoteGlobalGrid {
            placements: &[Global::Local, Global::Remote],
            cpus: &cpus(),
            counts: &[1],
            local_node: 0,
            // Remote without a remote node is refused by the workload.
            remote_node: None,
            writes_per_op: 1,
            sampling: quick(),
        };
        let err = grid.run(&Stop::new(), &mut |_| {}).unwrap_err();
        assert_eq!(
            err.step,
            RemoteGlobalStep {
                global: Global::Remote,
                threads: 1
            }
        );
        assert!(err.error.to_string().contains("remote node"), "{}", err.error);
    }

    #[test]
    fn threads_cycle_over_the_order() {
        assert_eq!(cpus_for(&[4, 5], 5), vec![4, 5, 4, 5, 4]);
        assert!(cpus_for(&[4], 0).is_empty());
    }
}
