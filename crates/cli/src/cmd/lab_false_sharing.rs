//! `numasleuth lab false-sharing`: packed against padded per-thread
//! counters, atomic and plain increments, over thread counts and
//! placements; the talk's 10M-operations metric and what the gap means.

use std::process::ExitCode;

use numasleuth_analyze::lab::{self as verdict, false_sharing as fs};
use numasleuth_kernel::Root;
use numasleuth_measure::lab::grid::{FalseSharingGrid, FalseSharingStep};
use numasleuth_report::lab_json::{FalseSharingDocument, FALSE_SHARING_SCHEMA};
use numasleuth_report::{lab_charts, lab_text};

use super::lab;
use super::lab_args::{CommonArgs, FalseSharingArgs, PlacementArg};
use super::measure_plan::{step_error, Machine, Progress};
use numasleuth_model::stop::RunSpan;

pub fn run(root: &Root, args: &FalseSharingArgs) -> anyhow::Result<ExitCode> {
    let common = &args.common;
    let outputs = lab::outputs(common)?;
    let machine = lab::machine(root, "lab false-sharing", &args.common)?;
    let allowed: Vec<u32> = machine.allowed_cpus.iter().collect();
    let (counts, oversubscribed) = lab::thread_counts(common, &allowed, "this process may use")?;
    let (placements, mut warnings) = lab::placements(&machine, &args.placement);
    let counters_node = machine.cpu_home_node(lab::cpu_order(&machine, placements[0])[0])?;
    let (measured, placement_verified, span) = measure_all(&machine, common, (&placements, &counts), counters_node)?;
    let rows = fs::rows(measured);
    let meaning = fs::meaning(&rows);
    warnings.extend(verdict::spread_warning(rows.iter().map(|r| {
        (
            format!("{} {} {} threads {}", r.op, r.layout, r.threads, r.placement),
            &r.ops_per_sec,
        )
    })));
    warnings.extend(verdict::cpu_share_warning(rows.iter().map(|r| {
        (
            format!("{} {} {} threads {}", r.op, r.layout, r.threads, r.placement),
            r.cpu_share.as_ref(),
        )
    })));
    warnings.extend(verdict::oversubscribed_warning(oversubscribed));
    if !placement_verified {
        warnings.push(format!(
            "the counters could not be verified to be on node {counters_node}"
        ));
    }
    let doc = FalseSharingDocument {
        schema: FALSE_SHARING_SCHEMA,
        run: lab::run_info(&machine, common, oversubscribed),
        results: rows,
        counters_node,
        placement_verified,
        meaning,
        warnings,
    };
    lab::emit(
        root,
        &outputs,
        (&doc, span),
        lab_text::false_sharing,
        lab_charts::false_sharing,
    )
}

/// Every placement × operation × layout × thread count in turn (until
/// Ctrl-C), whether the counters were on their node every time, and how
/// far it got.
fn measure_all(
    machine: &Machine,
    common: &CommonArgs,
    (placements, counts): (&[PlacementArg], &[usize]),
    counters_node: u32,
) -> anyhow::Result<(Vec<fs::Measured>, bool, RunSpan)> {
    let orders: Vec<_> = placements
        .iter()
        .map(|&p| (p.into(), lab::cpu_order(machine, p)))
        .collect();
    let plan = FalseSharingGrid {
        orders: &orders,
        counts,
        node: counters_node,
        sampling: lab::sampling(common),
    };
    let mut progress = Progress::new(plan.steps().len() as u64, "lab false-sharing");
    let label = |s: &FalseSharingStep| format!("{} {} {} threads", s.op.name(), s.layout.name(), s.threads);
    let done = plan
        .run(&progress.stop_token(), &mut |s| progress.step(&label(s)))
        .map_err(|e| step_error(e, |s| format!("false sharing, {}", label(s))))?;
    progress.finish();
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
            raw: lab::raw(outcome.samples),
        })
        .collect();
    Ok((measured, placement_verified, progress.span("configurations")))
}
