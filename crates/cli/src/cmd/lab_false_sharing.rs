//! `numasleuth lab false-sharing`: packed against padded per-thread
//! counters, atomic and plain increments, over thread counts and
//! placements; the talk's 10M-operations metric and what the gap means.

use std::process::ExitCode;

use anyhow::Context;
use numasleuth_analyze::lab::{self as verdict, false_sharing as fs};
use numasleuth_kernel::Root;
use numasleuth_measure::lab::false_sharing::{self as workload, Layout, Op};
use numasleuth_model::lab::Placement;
use numasleuth_report::lab_json::{FalseSharingDocument, FALSE_SHARING_SCHEMA};
use numasleuth_report::lab_svg::{self, Panel, Series};
use numasleuth_report::lab_text;

use super::lab::{self, point};
use super::lab_args::FalseSharingArgs;
use super::measure_plan::{self, Progress};

pub fn run(root: &Root, args: &FalseSharingArgs) -> anyhow::Result<ExitCode> {
    let common = &args.common;
    lab::check_output(common)?;
    let machine = measure_plan::machine(root, "lab false-sharing")?;
    let allowed: Vec<u32> = machine.allowed_cpus.iter().collect();
    let (counts, oversubscribed) = lab::thread_counts(common, &allowed, "this process may use")?;
    let (placements, mut warnings) = lab::placements(&machine, &args.placement);
    let counters_node = machine.node_of_cpu(lab::cpu_order(&machine, placements[0])[0]);
    let total = placements.len() * Op::ALL.len() * Layout::ALL.len() * counts.len();
    let mut progress = Progress::new(total as u64, "lab false-sharing");
    let mut measured = Vec::with_capacity(total);
    let mut placement_verified = true;
    for &placement in &placements {
        let order = lab::cpu_order(&machine, placement);
        for op in Op::ALL {
            for layout in Layout::ALL {
                for &threads in &counts {
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
    warnings.extend(lab::oversubscribed_warning(oversubscribed));
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
    lab::emit(common, &doc, || lab_text::false_sharing(&doc), || chart(&doc))
}

/// Per operation, two panels like the talk's: total rate, and per-thread
/// time for 10M operations. Packed lines solid, padded dashed.
fn chart(doc: &FalseSharingDocument) -> Result<String, lab_svg::ChartError> {
    let mut placements: Vec<Placement> = doc.results.iter().map(|r| r.placement).collect();
    placements.dedup();
    let mut panels = Vec::new();
    for op in Op::ALL {
        let series = |metric: fn(&fs::Row) -> numasleuth_analyze::stats::Summary| -> Vec<Series> {
            let mut out = Vec::new();
            for (p, placement) in placements.iter().enumerate() {
                for layout in Layout::ALL {
                    let points = doc
                        .results
                        .iter()
                        .filter(|r| r.op == op && r.layout == layout && r.placement == *placement)
                        .map(|r| point(r.threads, &metric(r)))
                        .collect();
                    let name = if placements.len() > 1 {
                        format!("{} ({placement})", layout.name())
                    } else {
                        layout.name().to_string()
                    };
                    out.push(Series {
                        name,
                        points,
                        dashed: layout == Layout::Padded,
                        colour: 2 * p + usize::from(layout == Layout::Padded),
                    });
                }
            }
            out
        };
        let what = match op {
            Op::Atomic => "atomic fetch-add",
            Op::Store => "plain load+store",
        };
        panels.push(Panel {
            title: format!("{what}: total throughput"),
            y_label: "ops/s, all threads".into(),
            series: series(|r| r.ops_per_sec),
            references: Vec::new(),
        });
        panels.push(Panel {
            title: format!("{what}: time for 10M ops per thread"),
            y_label: "ms".into(),
            series: series(|r| r.ms_per_10m_ops_per_thread),
            references: Vec::new(),
        });
    }
    lab_svg::chart(
        "numasleuth lab false-sharing: own counter per thread, packed in one line vs padded to 128 B",
        &panels,
        2,
    )
}
