//! `numasleuth lab false-sharing`: packed against padded per-thread
//! counters, atomic and plain increments, over thread counts and
//! placements; the talk's 10M-operations metric and what the gap means.

use std::process::ExitCode;

use anyhow::Context;
use numasleuth_analyze::lab::{self as verdict, false_sharing as fs};
use numasleuth_kernel::Root;
use numasleuth_measure::lab::false_sharing::{self as workload, Layout, Op};
use numasleuth_report::lab_json::{FalseSharingDocument, FALSE_SHARING_SCHEMA};
use numasleuth_report::{lab_charts, lab_text};

use super::lab;
use super::lab_args::{CommonArgs, FalseSharingArgs, PlacementArg};
use super::measure_plan::{Machine, Progress};
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
    let total = placements.len() * Op::ALL.len() * Layout::ALL.len() * counts.len();
    let mut progress = Progress::new(total as u64, "lab false-sharing");
    let mut measured = Vec::with_capacity(total);
    let mut placement_verified = true;
    'grid: for &placement in placements {
        let order = lab::cpu_order(machine, placement);
        for op in Op::ALL {
            for layout in Layout::ALL {
                for &threads in counts {
                    if progress.stopped() {
                        break 'grid;
                    }
                    let label = format!("{} {} {threads} threads", op.name(), layout.name());
                    progress.step(&label);
                    let cpus = lab::cpus_for(&order, threads);
                    let config = workload::Config {
                        layout,
                        op,
                        cpus: cpus.clone(),
                        threads,
                        budget: lab::budget(common),
                        samples: common.samples as usize,
                        node: counters_node,
                    };
                    let outcome = workload::run(&config).with_context(|| format!("false sharing, {label}"))?;
                    placement_verified &= outcome.placement.verified;
                    measured.push(fs::Measured {
                        layout,
                        op,
                        placement: placement.into(),
                        threads,
                        cpus,
                        counts_verified: true,
                        raw: lab::raw(outcome.samples),
                    });
                }
            }
        }
    }
    progress.finish();
    Ok((measured, placement_verified, progress.span("configurations")))
}
