//! `lab false-sharing`: packed against padded per-thread counters, atomic
//! and plain increments, over thread counts and placements; the talk's
//! 10M-operations metric and what the gap means.

use numasleuth_analyze::lab::documents::FalseSharingDocument;
use numasleuth_analyze::lab::{self as verdict, false_sharing as fs};
use numasleuth_measure::lab::grid::{FalseSharingGrid, FalseSharingStep};
use numasleuth_model::lab::Placement;
use numasleuth_model::stop::{RunSpan, Stop};

use super::{LabError, LabRequest};
use crate::machine::Machine;
use crate::steps::{StepObserver, Steps};

/// A `lab false-sharing` run as asked for.
#[derive(Debug, Clone)]
pub struct FalseSharingRequest {
    pub common: LabRequest,
    /// Where threads go, one run per placement; empty: both on a
    /// multi-node machine, compact on one node.
    pub placements: Vec<Placement>,
}

/// Every configuration until `stop`, with the counters bound to the node
/// of the first CPU, and what the gap between the layouts means.
pub fn run(
    machine: Machine,
    request: &FalseSharingRequest,
    stop: &Stop,
    observer: &mut dyn StepObserver,
) -> Result<(FalseSharingDocument, RunSpan), LabError> {
    let common = &request.common;
    let machine = super::narrowed(machine, common)?;
    let allowed: Vec<u32> = machine.allowed_cpus.iter().collect();
    let (counts, oversubscribed) = super::thread_counts(common, &allowed, None)?;
    let (placements, mut warnings) = super::placements(&machine, &request.placements);
    let (orders, counters_node) = super::orders(&machine, &placements)?;
    let grid = FalseSharingGrid {
        orders: &orders,
        counts: &counts,
        node: counters_node,
        sampling: super::sampling(common),
    };
    let (measured, placement_verified, span) = measure_all(&grid, stop, observer)?;
    let rows = fs::rows(measured);
    let meaning = fs::meaning(&rows);
    let name = |r: &fs::Row| format!("{} {} {} threads {}", r.op, r.layout, r.threads, r.placement);
    warnings.extend(verdict::spread_warning(rows.iter().map(|r| (name(r), &r.ops_per_sec))));
    warnings.extend(verdict::cpu_share_warning(
        rows.iter().map(|r| (name(r), r.cpu_share.as_ref())),
    ));
    warnings.extend(verdict::oversubscribed_warning(oversubscribed));
    if !placement_verified {
        warnings.push(format!(
            "the counters could not be verified to be on node {counters_node}"
        ));
    }
    let doc = FalseSharingDocument {
        run: super::run_info(&machine, common, oversubscribed),
        results: rows,
        counters_node,
        placement_verified,
        meaning,
        warnings,
    };
    Ok((doc, span))
}

/// Every placement × operation × layout × thread count in turn (until
/// `stop`), whether the counters were on their node every time, and how
/// far it got.
fn measure_all(
    grid: &FalseSharingGrid<'_>,
    stop: &Stop,
    observer: &mut dyn StepObserver,
) -> Result<(Vec<fs::Measured>, bool, RunSpan), LabError> {
    let mut steps = Steps::new(observer, stop, grid.steps().len() as u64, "lab false-sharing");
    let label = |s: &FalseSharingStep| format!("{} {} {} threads", s.op.name(), s.layout.name(), s.threads);
    let done = grid
        .run(&steps.stop_token(), &mut |s| steps.step(&label(s)))
        .map_err(|e| LabError::Configuration {
            experiment: "false sharing",
            step: label(&e.step),
            cause: e.error,
        })?;
    steps.finish();
    let placement_verified = done.iter().all(|(_, outcome)| outcome.placement.verified);
    let measured = done
        .into_iter()
        .map(|(step, outcome)| fs::Measured {
            layout: step.layout,
            op: step.op,
            placement: step.placement,
            threads: step.threads,
            cpus: step.cpus,
            counts_verified: true,
            raw: super::raw(outcome.samples),
        })
        .collect();
    Ok((measured, placement_verified, steps.span("configurations")))
}
