//! `numasleuth lab locks`: ticket vs queued (MCS) spinlocks, the std
//! Mutex and a bare atomic, with an empty or "one load" critical section,
//! over thread counts and placements, like the talk's lock charts.

use std::process::ExitCode;

use anyhow::Context;
use numasleuth_analyze::lab::{self as verdict, locks};
use numasleuth_kernel::Root;
use numasleuth_measure::lab::lock_bench::{self as workload, Load, LockKind};
use numasleuth_report::lab_json::{LocksDocument, LOCKS_SCHEMA};
use numasleuth_report::{lab_charts, lab_text};

use super::lab;
use super::lab_args::{CommonArgs, LockArg, LocksArgs, PlacementArg};
use super::measure_plan::{Machine, Progress};
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
    let total = grid.placements.len() * Load::ALL.len() * grid.kinds.len() * grid.counts.len();
    let mut progress = Progress::new(total as u64, "lab locks");
    let mut measured = Vec::with_capacity(total);
    let mut placement_verified = true;
    'grid: for &placement in grid.placements {
        let order = lab::cpu_order(machine, placement);
        for load in Load::ALL {
            for &lock in grid.kinds {
                for &threads in grid.counts {
                    if progress.stopped() {
                        break 'grid;
                    }
                    let label = format!("{} {} {threads} threads", lock.name(), load.name());
                    progress.step(&label);
                    let cpus = lab::cpus_for(&order, threads);
                    let config = workload::Config {
                        lock,
                        load,
                        cpus: cpus.clone(),
                        threads,
                        budget: lab::budget(common),
                        samples: common.samples as usize,
                        node: grid.lock_node,
                    };
                    let outcome = workload::run(&config).with_context(|| format!("locks, {label}"))?;
                    placement_verified &= outcome.placement.verified;
                    measured.push(locks::Measured {
                        lock,
                        load,
                        placement: placement.into(),
                        threads,
                        cpus,
                        count_verified: outcome.count_verified,
                        raw: lab::raw(outcome.samples),
                    });
                }
            }
        }
    }
    progress.finish();
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
