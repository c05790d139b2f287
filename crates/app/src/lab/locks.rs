//! `lab locks`: ticket vs queued (MCS) spinlocks, the std Mutex and a
//! bare atomic, with an empty or "one load" critical section, over thread
//! counts and placements, like the talk's lock charts.

use numasleuth_analyze::lab::documents::LocksDocument;
use numasleuth_analyze::lab::{self as verdict, locks};
use numasleuth_measure::lab::grid::{LockGrid, LockStep};
use numasleuth_model::lab::{LockKind, Placement};
use numasleuth_model::stop::{RunSpan, Stop};

use super::{LabError, LabRequest};
use crate::machine::Machine;
use crate::steps::{StepObserver, Steps};

/// A `lab locks` run as asked for.
#[derive(Debug, Clone)]
pub struct LocksRequest {
    pub common: LabRequest,
    /// Where threads go, one run per placement; empty: both on a
    /// multi-node machine, compact on one node.
    pub placements: Vec<Placement>,
    /// Which locks to run; empty: all four.
    pub locks: Vec<LockKind>,
}

/// Every configuration until `stop`, with the lock bound to the node of
/// the first CPU, and what the locks' curves mean.
pub fn run(
    machine: Machine,
    request: &LocksRequest,
    stop: &Stop,
    observer: &mut dyn StepObserver,
) -> Result<(LocksDocument, RunSpan), LabError> {
    let common = &request.common;
    let machine = super::narrowed(machine, common)?;
    let allowed: Vec<u32> = machine.allowed_cpus.iter().collect();
    let (counts, oversubscribed) = super::thread_counts(common, &allowed, None)?;
    let (placements, mut warnings) = super::placements(&machine, &request.placements);
    // In the order of LockKind::ALL, whatever order they were asked in.
    let kinds: Vec<LockKind> = LockKind::ALL
        .into_iter()
        .filter(|k| request.locks.is_empty() || request.locks.contains(k))
        .collect();
    let (orders, lock_node) = super::orders(&machine, &placements)?;
    let grid = LockGrid {
        orders: &orders,
        kinds: &kinds,
        counts: &counts,
        node: lock_node,
        sampling: super::sampling(common),
    };
    let (measured, placement_verified, span) = measure_all(&grid, stop, observer)?;
    let rows = locks::rows(measured);
    let meaning = locks::meaning(&rows);
    warnings.extend(row_warnings(&rows));
    warnings.extend(verdict::oversubscribed_warning(oversubscribed));
    if !placement_verified {
        warnings.push(format!("the lock could not be verified to be on node {lock_node}"));
    }
    let doc = LocksDocument {
        run: super::run_info(&machine, common, oversubscribed),
        results: rows,
        lock_node,
        placement_verified,
        meaning,
        warnings,
    };
    Ok((doc, span))
}

/// Each combination of the grid in turn (until `stop`), whether the lock
/// was on its node every time, and how far it got.
fn measure_all(
    grid: &LockGrid<'_>,
    stop: &Stop,
    observer: &mut dyn StepObserver,
) -> Result<(Vec<locks::Measured>, bool, RunSpan), LabError> {
    let mut steps = Steps::new(observer, stop, grid.steps().len() as u64, "lab locks");
    let label = |s: &LockStep| format!("{} {} {} threads", s.lock.name(), s.load.name(), s.threads);
    let done = grid
        .run(&steps.stop_token(), &mut |s| steps.step(&label(s)))
        .map_err(|e| LabError::Configuration {
            experiment: "locks",
            step: label(&e.step),
            cause: e.error,
        })?;
    steps.finish();
    let placement_verified = done.iter().all(|(_, outcome)| outcome.placement.verified);
    let measured = done
        .into_iter()
        .map(|(step, outcome)| locks::Measured {
            lock: step.lock,
            load: step.load,
            placement: step.placement,
            threads: step.threads,
            cpus: step.cpus,
            count_verified: outcome.count_verified,
            raw: super::raw(outcome.samples),
        })
        .collect();
    Ok((measured, placement_verified, steps.span("configurations")))
}

/// Rows whose throughput spread too widely, or that got too little CPU.
fn row_warnings(rows: &[locks::Row]) -> Vec<String> {
    let name = |r: &locks::Row| format!("{} {} {} threads {}", r.lock, r.load, r.threads, r.placement);
    let mut warnings = Vec::new();
    warnings.extend(verdict::spread_warning(rows.iter().map(|r| (name(r), &r.ops_per_sec))));
    warnings.extend(verdict::cpu_share_warning(
        rows.iter().map(|r| (name(r), r.cpu_share.as_ref())),
    ));
    warnings
}
