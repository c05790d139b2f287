//! The node×node grids of `mem`: idle latency and bandwidth from each
//! initiator node's CPUs to memory on each target node, a cell at a time
//! until a stop request, raw samples kept per cell. The matrices, their
//! medians and warnings are derived in `numasleuth-analyze`.

use numasleuth_model::stop::Stop;

use crate::bandwidth::{self, BandwidthConfig, BandwidthSamples};
use crate::buffer::{PageKind, Placement};
use crate::latency::{ChaseBuffer, LatencySamples, Sampling};
use crate::steps::{self, PhaseError, StepError};
use crate::stream::Mix;

/// One cell of a node×node matrix: indices into the plan's rows
/// (initiator nodes) and columns (target nodes).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cell {
    pub row: usize,
    pub column: usize,
}

/// Every cell, column by column: the latency grid sets up one buffer per
/// target and chases it from every row before the next is set up.
pub fn by_column(rows: usize, columns: usize) -> Vec<Cell> {
    (0..columns)
        .flat_map(|column| (0..rows).map(move |row| Cell { row, column }))
        .collect()
}

/// Every cell, row by row (the bandwidth grid's order).
pub fn by_row(rows: usize, columns: usize) -> Vec<Cell> {
    (0..rows)
        .flat_map(|row| (0..columns).map(move |column| Cell { row, column }))
        .collect()
}

/// What the latency grid chases: row `i` from `cpus[i]`, column `j` over
/// a buffer of `buffer_bytes` on node `targets[j]`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ChasePlan<'a> {
    pub cpus: &'a [u32],
    pub targets: &'a [u32],
    pub buffer_bytes: usize,
    pub pages: PageKind,
    pub sampling: Sampling,
}

/// What the latency grid measured before it ended: where each buffer set
/// up really was (by column, in order) and every cell chased, in order.
#[derive(Debug, Clone, PartialEq)]
pub struct ChaseCells {
    pub buffers: Vec<(usize, Placement)>,
    pub cells: Vec<(Cell, LatencySamples)>,
}

/// The latency grid, column by column until `stop`; `observe` sees each
/// cell before it is chased. A column's buffer is set up when its first
/// cell begins and freed before the next column's, so at most one is held.
pub fn latency_cells(
    plan: ChasePlan<'_>,
    stop: &Stop,
    observe: &mut dyn FnMut(&Cell),
) -> Result<ChaseCells, StepError<Cell, PhaseError>> {
    latency_cells_at(plan, by_column(plan.cpus.len(), plan.targets.len()), stop, observe)
}

/// [`latency_cells`] for `cells` only (to measure some again), in their
/// order: a column's buffer is set up again whenever the column changes.
pub fn latency_cells_at(
    plan: ChasePlan<'_>,
    cells: Vec<Cell>,
    stop: &Stop,
    observe: &mut dyn FnMut(&Cell),
) -> Result<ChaseCells, StepError<Cell, PhaseError>> {
    let mut buffers = Vec::new();
    let mut current: Option<(usize, ChaseBuffer)> = None;
    let cells = steps::run(cells, stop, observe, |cell| {
        // The last column's buffer is freed here, before the next is set up.
        let kept = current.take().filter(|(column, _)| *column == cell.column);
        let (_, buffer) = match kept {
            Some(same) => current.insert(same),
            None => {
                let node = plan.targets[cell.column];
                let buffer = ChaseBuffer::allocate(plan.buffer_bytes, node, plan.pages, 0x5eed + u64::from(node))
                    .map_err(PhaseError::Setup)?;
                buffers.push((cell.column, buffer.placement().clone()));
                current.insert((cell.column, buffer))
            }
        };
        buffer
            .measure(plan.cpus[cell.row], plan.sampling)
            .map_err(PhaseError::Run)
    })?;
    Ok(ChaseCells { buffers, cells })
}

/// What the bandwidth grid streams: row `i` with one thread on each of
/// `cpus_by_row[i]`, column `j` over `total_bytes` of buffers on node
/// `targets[j]`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct StreamPlan<'a> {
    pub cpus_by_row: &'a [Vec<u32>],
    pub targets: &'a [u32],
    pub mix: Mix,
    pub total_bytes: usize,
    pub pages: PageKind,
    pub sampling: Sampling,
}

/// The bandwidth grid, row by row until `stop`; `observe` sees each cell
/// before it is streamed.
pub fn bandwidth_cells(
    plan: StreamPlan<'_>,
    stop: &Stop,
    observe: &mut dyn FnMut(&Cell),
) -> Result<Vec<(Cell, BandwidthSamples)>, StepError<Cell>> {
    bandwidth_cells_at(plan, by_row(plan.cpus_by_row.len(), plan.targets.len()), stop, observe)
}

/// [`bandwidth_cells`] for `cells` only (to measure some again), in their
/// order.
pub fn bandwidth_cells_at(
    plan: StreamPlan<'_>,
    cells: Vec<Cell>,
    stop: &Stop,
    observe: &mut dyn FnMut(&Cell),
) -> Result<Vec<(Cell, BandwidthSamples)>, StepError<Cell>> {
    steps::run(cells, stop, observe, |cell| {
        bandwidth::measure(&BandwidthConfig {
            mix: plan.mix,
            cpus: plan.cpus_by_row[cell.row].clone(),
            node: plan.targets[cell.column],
            total_bytes: plan.total_bytes,
            pages: plan.pages,
            sampling: plan.sampling,
        })
    })
}

#[cfg(test)]
#[path = "mem_grids_tests.rs"]
mod tests;
