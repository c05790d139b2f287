//! `numasleuth pmu (--pid PID --duration D | -- CMD ARGS…)`: count every
//! event the kernel offers on a process or a command, scaled for
//! multiplexing, with IPC when the CPU counts cycles, and why each other
//! event could not be counted.
//!
//! Wiring only: the counting is the application layer's
//! (`numasleuth_app::pmu`); this prints it (`report`) and exits with the
//! command's own status.

use numasleuth_analyze::pmu::plan::Selection;
use numasleuth_app::pmu::PmuRequest;
use numasleuth_kernel::Root;
use numasleuth_model::perf::pmu::TargetRaw;
use numasleuth_probe::pmu::Target;
use numasleuth_report::{pmu_json, pmu_text};
use std::process::ExitCode;

use super::pmu_args::{EventsArg, PmuArgs, PmuSub};
use numasleuth_report::export::TextJson;

pub fn run(root: &Root, args: &PmuArgs) -> anyhow::Result<ExitCode> {
    if let Some(PmuSub::Diff(diff)) = &args.sub {
        return super::pmu_diff::run(root, diff);
    }
    let outputs = args.output.plan_text_json(args.json)?;
    let events = match &args.events {
        EventsArg::All => Selection::All,
        EventsArg::List(names) => Selection::List(names.clone()),
    };
    let target = match args.pid.as_ref().map(super::pid_arg::ProcessRef::pid) {
        Some(pid) => Some(Target::Pid {
            pid,
            duration: args.duration,
        }),
        None if !args.command.is_empty() => Some(Target::Command {
            argv: args.command.clone(),
        }),
        None => None,
    };
    // Both end on the shared stop: a watched process is counted until
    // Ctrl-C (or its duration) and reported; a command is passed it.
    let stop = super::stop_signal::stop_on_signals();
    let request = PmuRequest {
        target,
        events,
        max_threads: numasleuth_app::limits::THREADS_MAX as usize,
        path: std::env::var_os("PATH"),
    };
    let counted = numasleuth_app::pmu::run(root, request, &stop, &crate::output::Say)?;
    let summary = counted.summary;
    let report = TextJson::new(pmu_json::build(&summary), |layout| pmu_text::render(&summary, layout));
    super::output::emit_run(root, &outputs, &report, counted.span)?;
    Ok(passed_on(&counted.target))
}

/// The command's own exit status, passed on as `perf stat` does, so a
/// script that runs `numasleuth pmu -- CMD` still sees whether CMD failed:
/// its exit code, or 128 + the signal that killed it, as shells report
/// it. A watched `--pid` process is not ours: 0. An error of numasleuth's
/// own never gets here; it exits 2 whatever the command did.
fn passed_on(target: &TargetRaw) -> ExitCode {
    match target {
        TargetRaw::Command { exit_code, signal, .. } => {
            let status = match (exit_code, signal) {
                (Some(code), _) => *code,
                (None, Some(signal)) => 128 + signal,
                (None, None) => 0,
            };
            ExitCode::from(u8::try_from(status).unwrap_or(u8::MAX))
        }
        TargetRaw::Pid { .. } => ExitCode::SUCCESS,
    }
}
