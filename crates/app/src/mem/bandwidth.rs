//! `mem`'s node×node bandwidth matrix: each initiator node's threads
//! stream one read:write mix through buffers on each target node, and
//! unsteady cells are streamed again.

use numasleuth_analyze::mem::{bandwidth_grid, NodeGrid};
use numasleuth_analyze::mem_document::{BandwidthMatrix, MemDocument};
use numasleuth_analyze::timing::RawBandwidth;
use numasleuth_measure::bandwidth::BandwidthSamples;
use numasleuth_measure::mem_grids::{self, Cell, StreamPlan};
use numasleuth_measure::steps::StepError;

use super::{again, sizing, MemError, MemRequest, Settings};
use crate::machine::Machine;
use crate::measured::{self, placement_check};
use crate::steps::Steps;

pub(super) fn matrix(
    machine: &Machine,
    settings: &Settings,
    request: &MemRequest,
    (initiators, targets): (&[u32], &[u32]),
    doc: &mut MemDocument,
    steps: &mut Steps,
) -> Result<(), MemError> {
    // Stopped during the latency matrix: no bandwidth matrix at all.
    if steps.stopped() {
        return Ok(());
    }
    let mix = request.mix;
    let cpus_by_row = bandwidth_cpus(machine, initiators, request.threads)?;
    let set = sizing::threads_set(machine, settings.size, &cpus_by_row, targets, 0);
    doc.warnings.extend(set.notes.iter().cloned());
    let total_bytes = set.working_set_bytes as usize;
    for &target in targets {
        machine.check_fits(target, total_bytes, "the bandwidth buffers")?;
    }
    let plan = StreamPlan {
        cpus_by_row: &cpus_by_row,
        targets,
        mix,
        total_bytes,
        pages: settings.pages,
        sampling: settings.sampling,
    };
    let failed = |e: StepError<Cell>| MemError::Bandwidth {
        initiator: initiators[e.step.row],
        node: targets[e.step.column],
        cause: e.error,
    };
    let stop = steps.stop_token();
    let mut done = mem_grids::bandwidth_cells(plan, &stop, &mut |c| {
        steps.step(&format!("bandwidth {}→{}", initiators[c.row], targets[c.column]));
    })
    .map_err(failed)?;
    let measured_again = again::bandwidth(plan, (initiators, targets), &mut done, steps);
    doc.measured_again.extend(measured_again.map_err(failed)?);
    let (per_thread, non_temporal) = done
        .last()
        .map_or((0, false), |(_, s)| (s.buffer_bytes_per_thread, s.non_temporal_stores));
    let matrix = record_streams(doc, (initiators, targets), &done);
    doc.bandwidth_bytes_per_sec = Some(BandwidthMatrix {
        nodes: targets.to_vec(),
        initiators: initiators.to_vec(),
        cpus: cpus_by_row,
        mix: mix.name(),
        non_temporal_stores: non_temporal,
        buffer_bytes_per_thread: per_thread,
        working_set: set,
        matrix,
    });
    Ok(())
}

/// What the bandwidth cells streamed add to the document (each thread's
/// buffer placement, warnings, raw samples), and their matrix.
fn record_streams(
    doc: &mut MemDocument,
    (initiators, targets): (&[u32], &[u32]),
    done: &[(Cell, BandwidthSamples)],
) -> NodeGrid {
    let cell_name = |c: &Cell| (initiators[c.row], targets[c.column]);
    for (c, samples) in done {
        let (initiator, target) = cell_name(c);
        doc.placements
            .extend(samples.placements.iter().enumerate().map(|(k, placement)| {
                placement_check(
                    format!("bandwidth buffer {k} of node {initiator} → node {target}"),
                    placement,
                )
            }));
    }
    let rates: Vec<_> = done.iter().map(|(_, s)| measured::bandwidth(s)).collect();
    let (matrix, warnings) = bandwidth_grid(
        (initiators.len(), targets.len()),
        done.iter().zip(&rates).map(|((c, _), rates)| {
            let (initiator, target) = cell_name(c);
            ((c.row, c.column), format!("node {initiator} → node {target}"), rates)
        }),
    );
    if let Some(raw) = doc.raw.as_mut() {
        raw.bandwidth
            .extend(done.iter().zip(rates).map(|((c, samples), rates)| RawBandwidth {
                cpus: samples.cpus.clone(),
                node: targets[c.column],
                samples: rates,
            }));
    }
    doc.warnings.extend(warnings);
    matrix
}

/// The CPUs whose threads make each initiator node's bandwidth: all it
/// may use, or the first `--threads` of them; more threads than CPUs is
/// refused, as threads sharing a CPU would measure the scheduler.
fn bandwidth_cpus(machine: &Machine, initiators: &[u32], threads: Option<u32>) -> Result<Vec<Vec<u32>>, MemError> {
    let mut cpus_by_row = Vec::new();
    for &initiator in initiators {
        let mut cpus = machine.cpus_of(initiator);
        if let Some(threads) = threads {
            if threads as usize > cpus.len() {
                return Err(MemError::TooManyThreads {
                    threads,
                    node: initiator,
                    cpus,
                });
            }
            cpus.truncate(threads as usize);
        }
        cpus_by_row.push(cpus);
    }
    Ok(cpus_by_row)
}
