//! `numasleuth lab locks`: ticket vs queued (MCS) spinlocks, the std
//! Mutex and a bare atomic, with an empty or "one load" critical section,
//! over thread counts and placements, like the talk's lock charts.

use std::process::ExitCode;

use numasleuth_analyze::lab::{self as verdict, locks};
use numasleuth_kernel::Root;
use numasleuth_measure::lab::grid::{LockGrid, LockStep};
use numasleuth_measure::lab::lock_bench::LockKind;
use numasleuth_report::lab_json::{LocksDocument, LOCKS_SCHEMA};
use numasleuth_report::{lab_charts, lab_text};

use super::lab;
use super::lab_args::{CommonArgs, LockArg, LocksArgs, PlacementArg};
use super::measure_plan::{step_error, Machine, Progress};
use numasleuth_model::stop::RunSpan;

pub fn run(root: &Root, args: &LocksArgs) -> anyhow::Result<ExitCode> {
    let common = &args.common;
    let outputs = lab::outputs(common)?;
    let machine = lab::machine(root, "lab locks", &args.common)?;
    let allowed: Vec<u32> = machine.allowed_cpus.iter().collect();
    let (counts, oversubscribed) = lab::thread_counts(common, &allowed, "this process may use")?;
    let (placements, mut warnings) = lab::placements(&machine, &args.placement);
    let kinds: Vec<LockKind> = if args.locks.is_empty() {
        LockKind::ALL.to_vec()
    } else {
        LockKind::ALL
            .into_iter()
            .filter(|k| args.locks.contains(&lock_arg(*k)))
            .collect()
    };
    let lock_node = machine.cpu_home_node(lab::cpu_order(&machine, placements[0])[0])?;
    let grid = Grid {
        placements: &placements,
        kinds: &kinds,
        counts: &counts,
        lock_node,
    };
    let (measured, placement_verified, span) = measure_all(&machine, common, &grid)?;
    let rows = locks::rows(measured);
    let meaning = locks::meaning(&rows);
    warnings.extend(row_warnings(&rows));
    warnings.extend(verdict::oversubscribed_warning(oversubscribed));
    if !placement_verified {
        warnings.push(format!("the lock could not be verified to be on node {lock_node}"));
    }
    let doc = LocksDocument {
        schema: LOCKS_SCHEMA,
        run: lab::run_info(&machine, common, oversubscribed),
        results: rows,
        lock_node,
        placement_verified,
        meaning,
        warnings,
    };
    lab::emit(root, &outputs, (&doc, span), lab_text::locks, lab_charts::locks)
}

/// What is measured: every placement × load × lock × thread count.
struct Grid<'a> {
    placements: &'a [PlacementArg],
    kinds: &'a [LockKind],
    counts: &'a [usize],
    /// The node the lock's memory is bound to.
    lock_node: u32,
}

/// Each combination of the grid in turn (until Ctrl-C), whether the lock
/// was on its node every time, and how far it got.
fn measure_all(
    machine: &Machine,
    common: &CommonArgs,
    grid: &Grid<'_>,
) -> anyhow::Result<(Vec<locks::Measured>, bool, RunSpan)> {
    let orders: Vec<_> = grid
        .placements
        .iter()
        .map(|&p| (p.into(), lab::cpu_order(machine, p)))
        .collect();
    let plan = LockGrid {
        orders: &orders,
        kinds: grid.kinds,
        counts: grid.counts,
        node: grid.lock_node,
        sampling: lab::sampling(common),
    };
    let mut progress = Progress::new(plan.steps().len() as u64, "lab locks");
    let label = |s: &LockStep| format!("{} {} {} threads", s.lock.name(), s.load.name(), s.threads);
    let done = plan
        .run(&progress.stop_token(), &mut |s| progress.step(&label(s)))
        .map_err(|e| step_error(e, |s| format!("locks, {}", label(s))))?;
    progress.finish();
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
            raw: lab::raw(outcome.samples),
        })
        .collect();
    Ok((measured, placement_verified, progress.span("configurations")))
}

/// Rows whose throughput spread too widely, or that got too little CPU.
fn row_warnings(rows: &[locks::Row]) -> Vec<String> {
    let mut warnings = Vec::new();
    warnings.extend(verdict::spread_warning(rows.iter().map(|r| {
        (
            format!("{} {} {} threads {}", r.lock, r.load, r.threads, r.placement),
            &r.ops_per_sec,
        )
    })));
    warnings.extend(verdict::cpu_share_warning(rows.iter().map(|r| {
        (
            format!("{} {} {} threads {}", r.lock, r.load, r.threads, r.placement),
            r.cpu_share.as_ref(),
        )
    })));
    warnings
}

fn lock_arg(kind: LockKind) -> LockArg {
    match kind {
        LockKind::Ticket => LockArg::Ticket,
        LockKind::Mcs => LockArg::Mcs,
        LockKind::Mutex => LockArg::Mutex,
        LockKind::Atomic => LockArg::Atomic,
    }
}
