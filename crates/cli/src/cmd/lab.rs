//! `numasleuth lab`: reproduce false sharing, lock scaling and the
//! remote-global bug on this machine, scaled to its CPUs and nodes.
//!
//! Wiring only: the experiments are `numasleuth_app::lab` (thread counts
//! and CPU orders this machine can honour, every configuration measured
//! until Ctrl-C, the rows judged); this turns the arguments into their
//! requests, draws their progress and writes the report.

use std::process::ExitCode;

use numasleuth_analyze::lab::documents::LocksDocument;
use numasleuth_app::lab::{
    false_sharing::FalseSharingRequest, locks::LocksRequest, remote_global::RemoteGlobalRequest, LabRequest, Threads,
};
use numasleuth_kernel::Root;
use numasleuth_model::lab::LockKind;
use numasleuth_model::stop::RunSpan;
use numasleuth_report::lab_charts::{self, LabReport};
use numasleuth_report::lab_svg::ChartError;
use numasleuth_report::lab_text;
use numasleuth_report::layout::TextLayout;

use super::lab_args::{CommonArgs, Experiment, LabArgs, LockArg};
use super::measure_plan::{self, Bar};
use super::output::{Aliases, Plan};

pub fn run(root: &Root, args: &LabArgs) -> anyhow::Result<ExitCode> {
    let common = match &args.experiment {
        Experiment::FalseSharing(a) => &a.common,
        Experiment::Locks(a) => &a.common,
        Experiment::RemoteGlobal(a) => &a.common,
    };
    // Where the report goes is checked before any measuring starts (every
    // experiment offers the same formats), so a typo in a path does not throw away minutes of samples.
    let outputs = common.output.plan::<LabReport<'_, LocksDocument>>(Aliases {
        json: common.json,
        svg: common.svg.as_deref(),
        ..Aliases::default()
    })?;
    let request = request(common);
    let stop = super::stop_signal::stop_on_signals();
    let bar = &mut Bar::new();
    match &args.experiment {
        Experiment::FalseSharing(a) => {
            let machine = measure_plan::machine(root, "lab false-sharing")?;
            let request = FalseSharingRequest {
                common: request,
                placements: a.placement.iter().map(|&p| p.into()).collect(),
            };
            let done = numasleuth_app::lab::false_sharing::run(machine, &request, &stop, bar)?;
            emit(root, &outputs, done, lab_text::false_sharing, lab_charts::false_sharing)
        }
        Experiment::Locks(a) => {
            let machine = measure_plan::machine(root, "lab locks")?;
            let request = LocksRequest {
                common: request,
                placements: a.placement.iter().map(|&p| p.into()).collect(),
                locks: a.locks.iter().map(|&l| lock_kind(l)).collect(),
            };
            let done = numasleuth_app::lab::locks::run(machine, &request, &stop, bar)?;
            emit(root, &outputs, done, lab_text::locks, lab_charts::locks)
        }
        Experiment::RemoteGlobal(a) => {
            let machine = measure_plan::machine(root, "lab remote-global")?;
            let request = RemoteGlobalRequest {
                common: request,
                node: a.node,
                remote_node: a.remote_node,
                writes_per_op: a.writes_per_op,
            };
            let done = numasleuth_app::lab::remote_global::run(machine, &request, &stop, bar)?;
            emit(root, &outputs, done, lab_text::remote_global, lab_charts::remote_global)
        }
    }
}

fn request(common: &CommonArgs) -> LabRequest {
    LabRequest {
        cpus: common.cpus.clone(),
        threads: match (common.threads, &common.thread_sweep) {
            (Some(count), _) => Threads::One(count),
            (None, Some(list)) => Threads::Counts(list.clone()),
            (None, None) => Threads::Sweep,
        },
        samples: common.samples,
        sample_ms: common.sample_ms,
        oversubscribe: common.oversubscribe,
    }
}

fn lock_kind(arg: LockArg) -> LockKind {
    match arg {
        LockArg::Ticket => LockKind::Ticket,
        LockArg::Mcs => LockKind::Mcs,
        LockArg::Mutex => LockKind::Mutex,
        LockArg::Atomic => LockKind::Atomic,
    }
}

/// The experiment's report, to stdout and every file asked for.
/// `span` says how many configurations ran, and whether Ctrl-C cut the
/// run short.
fn emit<D: numasleuth_report::schema::Documented>(
    root: &Root,
    outputs: &Plan,
    (document, span): (D, RunSpan),
    text: fn(&D, &TextLayout) -> String,
    chart: fn(&D) -> Result<String, ChartError>,
) -> anyhow::Result<ExitCode> {
    let report = LabReport {
        document: &document,
        text,
        chart,
    };
    super::output::emit_run(root, outputs, &report, Some(span))?;
    Ok(ExitCode::SUCCESS)
}
