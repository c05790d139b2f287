//! `mem`'s node×node latency matrix: the chase buffer sized (and grown
//! while the curve still rises), each cell chased from its row's first
//! CPU, unsteady cells chased again, and the self-check at twice the size.

use numasleuth_analyze::latency_check::{CurveCheck, PROBE_FACTOR};
use numasleuth_analyze::mem::{latency_grid, NodeGrid};
use numasleuth_analyze::mem_document::{LatencyMatrix, MemDocument};
use numasleuth_analyze::stats::Summary;
use numasleuth_analyze::timing::RawLatency;
use numasleuth_analyze::working_set::WorkingSet;
use numasleuth_measure::mem_grids::{self, Cell, ChaseCells, ChasePlan};
use numasleuth_measure::steps::{PhaseError, StepError};

use super::{again, sizing, MemError, Settings};
use crate::machine::Machine;
use crate::measured::{self, placement_check};
use crate::steps::Steps;

pub(super) fn matrix(
    machine: &Machine,
    settings: &Settings,
    (initiators, targets): (&[u32], &[u32]),
    doc: &mut MemDocument,
    steps: &mut Steps,
) -> Result<(), MemError> {
    let cpus: Vec<u32> = initiators.iter().map(|&n| machine.cpus_of(n)[0]).collect();
    let mut set = sizing::chase_set(machine, settings.size, &cpus, targets);
    doc.warnings.extend(set.notes.iter().cloned());
    let home = home_column(machine, &cpus, targets);
    let pair = (cpus[0], targets[home]);
    let search = sizing::grow_until_flat(machine, settings, pair, targets, (&mut set, doc), steps);
    let buffer_bytes = set.working_set_bytes as usize;
    for &target in targets {
        machine.check_fits(target, buffer_bytes, "the latency buffer")?;
    }
    let plan = ChasePlan {
        cpus: &cpus,
        targets,
        buffer_bytes,
        pages: settings.pages,
        sampling: settings.sampling,
    };
    let stop = steps.stop_token();
    let mut done = mem_grids::latency_cells(plan, &stop, &mut |c| {
        steps.step(&format!("latency {}→{}", initiators[c.row], targets[c.column]));
    })
    .map_err(|e| chase_error(e, &cpus, targets))?;
    let measured_again = again::latency(plan, (initiators, targets), &mut done, steps);
    doc.measured_again
        .extend(measured_again.map_err(|e| chase_error(e, &cpus, targets))?);
    let matrix = record_chases(doc, (initiators, targets, &cpus), &done);
    let (self_check, self_check_skipped) = if steps.stopped() {
        (None, Some("stopped before the self-check".to_string()))
    } else {
        let probe = search.as_ref().ok().and_then(|found| found.probe.as_ref());
        let first_row = (cpus[0], targets, home);
        first_row_self_check(machine, settings, first_row, (&set, &matrix), probe, (doc, steps))
    };
    let (size_search, size_search_note) = match search {
        Ok(found) => (found.checks, found.stopped),
        Err(why) => (Vec::new(), Some(why)),
    };
    doc.latency_ns = Some(LatencyMatrix {
        nodes: targets.to_vec(),
        initiators: initiators.to_vec(),
        cpus,
        buffer_bytes,
        working_set: set,
        matrix,
        self_check,
        self_check_skipped,
        size_search,
        size_search_note,
    });
    Ok(())
}

/// A failed latency cell: setting up its column's buffer, or chasing it
/// from its row's CPU.
fn chase_error(failed: StepError<Cell, PhaseError>, cpus: &[u32], targets: &[u32]) -> MemError {
    let (cpu, node) = (cpus[failed.step.row], targets[failed.step.column]);
    match failed.error {
        PhaseError::Setup(cause) => MemError::LatencyBuffer { node, cause },
        PhaseError::Run(cause) => MemError::Latency { cpu, node, cause },
    }
}

/// What the latency cells chased add to the document (buffer placements,
/// the clock's overhead, warnings, raw samples), and their matrix.
fn record_chases(
    doc: &mut MemDocument,
    (initiators, targets, cpus): (&[u32], &[u32], &[u32]),
    done: &ChaseCells,
) -> NodeGrid {
    doc.placements.extend(
        done.buffers.iter().map(|(column, placement)| {
            placement_check(format!("latency buffer on node {}", targets[*column]), placement)
        }),
    );
    if let Some((_, last)) = done.cells.last() {
        doc.timer_overhead_ns = Some(last.timer_overhead_ns);
    }
    let chases: Vec<_> = done.cells.iter().map(|(_, s)| measured::chase(s)).collect();
    let (matrix, warnings) = latency_grid(
        (initiators.len(), targets.len()),
        done.cells.iter().zip(&chases).map(|((c, _), chase)| {
            let name = format!("node {} → node {}", initiators[c.row], targets[c.column]);
            ((c.row, c.column), name, chase)
        }),
    );
    if let Some(raw) = doc.raw.as_mut() {
        raw.latency
            .extend(done.cells.iter().zip(chases).map(|((c, samples), chase)| RawLatency {
                cpu: cpus[c.row],
                node: targets[c.column],
                size_bytes: samples.size_bytes,
                chase,
            }));
    }
    doc.warnings.extend(warnings);
    matrix
}

/// The column of the first row's own node, or the first column when its
/// node is not measured: where the size search and the self-check chase.
fn home_column(machine: &Machine, cpus: &[u32], targets: &[u32]) -> usize {
    let home = machine.topo.node_of_cpu(cpus[0]);
    targets.iter().position(|&n| Some(n) == home).unwrap_or(0)
}

/// The self-check of the latency figure: a chase at twice the working set
/// from the first row's CPU to column `t` (`home_column`), or the size
/// search's chase at that size when there is one.
fn first_row_self_check(
    machine: &Machine,
    settings: &Settings,
    (cpu, targets, t): (u32, &[u32], usize),
    (set, matrix): (&WorkingSet, &[Vec<Option<Summary>>]),
    probe: Option<&(u64, Summary)>,
    (doc, steps): (&mut MemDocument, &Steps),
) -> (Option<CurveCheck>, Option<String>) {
    if settings.size.is_some() {
        // Said before it runs: twice a large --size is a large allocation.
        steps.say(&format!(
            "numasleuth: self-check: a chase over {} ({PROBE_FACTOR}× --size) from CPU {cpu} to node {}",
            numasleuth_model::units::bytes(set.working_set_bytes.saturating_mul(PROBE_FACTOR)),
            targets[t]
        ));
    }
    let check = sizing::self_check(
        machine,
        settings,
        (cpu, targets[t]),
        (set, probe),
        matrix[0][t].as_ref(),
        doc,
    );
    if let Some(c) = check.as_ref().ok().filter(|c| !c.flattened) {
        doc.warnings.push(c.message.clone());
    }
    match check {
        Ok(c) => (Some(c), None),
        Err(why) => (None, Some(why)),
    }
}
