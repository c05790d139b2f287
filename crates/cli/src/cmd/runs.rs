//! `numasleuth runs -n N -- CMD`: run a workload N times, each started
//! pinned on a CPU taken in turn, sample where its memory and threads are
//! after a settle time (inspect's model), and say whether the metric is
//! bimodal and which observation explains the modes.
//!
//! Wiring only: the series and its analysis are `numasleuth_app::runs`;
//! this hands it the request and prints the report.

use std::process::ExitCode;

use numasleuth_app::runs::RunsRequest;
use numasleuth_kernel::Root;
use numasleuth_report::runs_text::RunsReport;

use super::output::Aliases;
use super::runs_args::RunsArgs;

pub fn run(root: &Root, args: &RunsArgs) -> anyhow::Result<ExitCode> {
    let outputs = args.output.plan::<RunsReport>(Aliases {
        json: args.json,
        svg: args.svg.as_deref(),
        ..Aliases::default()
    })?;
    numasleuth_app::refuse_under_snapshot(root, "runs")?;
    let topology = super::topology(root)?;
    let request = RunsRequest {
        command: args.command.clone(),
        runs: args.runs,
        start_cpus: args.start_cpus.clone(),
        release_after: args.release_after,
        metric: args.metric.clone(),
        lower_is_better: args.lower_is_better,
        settle: args.settle,
        timeout: args.timeout,
        verbose: args.verbose,
    };
    let stop = super::stop_signal::stop_on_signals();
    let done = numasleuth_app::runs::run(root, &topology, &request, &stop, &crate::output::Say)?;
    let command: Vec<String> = args.command.iter().map(|a| a.to_string_lossy().into_owned()).collect();
    let report = RunsReport {
        command: &command,
        metric_name: args.metric.as_deref().unwrap_or("wall_s"),
        from_output: args.metric.is_some(),
        lower_is_better: done.lower_is_better,
        rows: &done.rows,
        analysis: &done.analysis,
        program: done.program_path.as_deref(),
        missing: &done.missing,
    };
    super::output::emit_run(root, &outputs, &report, Some(done.span))?;
    Ok(ExitCode::SUCCESS)
}
