//! `mem`'s matrix cells whose figures did not hold, measured again within
//! a budget (`numasleuth_measure::again`), so that a finding drawn from
//! them rests on a steady figure when the machine allows one.
//!
//! Whether a figure holds is analysis' one definition
//! (`confidence::holds`); the cell's last measurement replaces the earlier
//! ones, raw samples and buffer placements included, so `--raw` replays
//! the matrix as shown.

use numasleuth_analyze::confidence::holds;
use numasleuth_analyze::mem_document::MeasuredAgain;
use numasleuth_measure::again::{again, Budget};
use numasleuth_measure::bandwidth::BandwidthSamples;
use numasleuth_measure::latency::LatencySamples;
use numasleuth_measure::mem_grids::{self, Cell, ChaseCells, ChasePlan, StreamPlan};
use numasleuth_measure::steps::{PhaseError, StepError};

use crate::measured;
use crate::steps::Steps;

/// Latency cells of `done` chased again; `(initiators, targets)` name the
/// rows and columns.
pub(super) fn latency(
    plan: ChasePlan<'_>,
    (initiators, targets): (&[u32], &[u32]),
    done: &mut ChaseCells,
    steps: &mut Steps,
) -> Result<Vec<MeasuredAgain>, StepError<Cell, PhaseError>> {
    if steps.stopped() {
        return Ok(Vec::new());
    }
    let hold = |s: &LatencySamples| measured::chase(s).summary().is_some_and(|x| holds(&x));
    let budget = Budget::for_grid(done.cells.len());
    let buffers = &mut done.buffers;
    let times = again(&mut done.cells, budget, &hold, &mut |cells| {
        steps.plan_more(cells.len() as u64);
        let stop = steps.stop_token();
        let more = mem_grids::latency_cells_at(plan, cells, &stop, &mut |c| {
            steps.step(&format!("latency {}→{} again", initiators[c.row], targets[c.column]));
        })?;
        buffers.extend(more.buffers);
        Ok(more.cells)
    })?;
    Ok(named("latency", (initiators, targets), times))
}

/// Bandwidth cells of `done` streamed again.
pub(super) fn bandwidth(
    plan: StreamPlan<'_>,
    (initiators, targets): (&[u32], &[u32]),
    done: &mut [(Cell, BandwidthSamples)],
    steps: &mut Steps,
) -> Result<Vec<MeasuredAgain>, StepError<Cell>> {
    if steps.stopped() {
        return Ok(Vec::new());
    }
    let hold = |s: &BandwidthSamples| measured::bandwidth(s).summary().is_some_and(|x| holds(&x));
    let budget = Budget::for_grid(done.len());
    let times = again(done, budget, &hold, &mut |cells| {
        steps.plan_more(cells.len() as u64);
        let stop = steps.stop_token();
        mem_grids::bandwidth_cells_at(plan, cells, &stop, &mut |c| {
            steps.step(&format!("bandwidth {}→{} again", initiators[c.row], targets[c.column]));
        })
    })?;
    Ok(named("bandwidth", (initiators, targets), times))
}

fn named(matrix: &'static str, (initiators, targets): (&[u32], &[u32]), times: Vec<(Cell, u32)>) -> Vec<MeasuredAgain> {
    times
        .into_iter()
        .map(|(c, times)| MeasuredAgain {
            matrix,
            initiator: initiators[c.row],
            node: targets[c.column],
            times,
        })
        .collect()
}
