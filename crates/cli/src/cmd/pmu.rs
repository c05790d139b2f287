//! `numasleuth pmu (--pid PID --duration D | -- CMD ARGS…)`: count every
//! event the kernel offers on a process or a command, scaled for
//! multiplexing, with IPC when the CPU counts cycles, and why each other
//! event could not be counted.
//!
//! Wiring only: read the PMUs (`kernel`), choose the events (`analyze`),
//! count (`probe`), scale and explain (`analyze`), print (`report`), and
//! exit with the command's own status.

use std::process::ExitCode;
use std::time::Instant;

use anyhow::{bail, Context as _};
use numasleuth_analyze::pmu::plan::{plan, Selection};
use numasleuth_analyze::pmu::{nothing_counted, summarize, Context};
use numasleuth_kernel::sysfs::pmu::read_pmus;
use numasleuth_kernel::Root;
use numasleuth_model::perf::pmu::TargetRaw;
use numasleuth_model::stop::RunSpan;
use numasleuth_probe::pmu::{count, spawn, CountSpec, Target};
use numasleuth_report::{pmu_json, pmu_text};

use super::pmu_args::{EventsArg, PmuArgs, PmuSub};
use numasleuth_report::export::TextJson;

pub fn run(root: &Root, args: &PmuArgs) -> anyhow::Result<ExitCode> {
    if let Some(PmuSub::Diff(diff)) = &args.sub {
        return super::pmu_diff::run(root, diff);
    }
    let outputs = args.output.plan_text_json(args.json)?;
    if !root.is_live() {
        bail!("pmu counts events on the live system; --root names a snapshot, where nothing runs to count");
    }
    let readings = read_pmus(root).context("cannot list the PMUs")?;
    let selection = match &args.events {
        EventsArg::All => Selection::All,
        EventsArg::List(names) => Selection::List(names.clone()),
    };
    let plan = plan(&readings, &selection)?;
    let paranoid = numasleuth_kernel::procfs::settings::perf_event_paranoid(root);
    let target = match args.pid.as_ref().map(super::pid_arg::ProcessRef::pid) {
        Some(pid) => Target::Pid {
            pid,
            duration: args.duration,
        },
        None if !args.command.is_empty() => Target::Command {
            argv: args.command.clone(),
        },
        None => bail!("give --pid PID (with --duration D, or until Ctrl-C), or a command after `--`"),
    };
    // Checked before the progress line, so a typo is one error line.
    match &target {
        Target::Pid { pid, .. } if !root.exists(&format!("proc/{pid}")) => {
            bail!("no such process: {pid} (it does not exist or has exited)")
        }
        Target::Command { argv } => {
            spawn::resolve(&argv[0], std::env::var_os("PATH").as_deref())
                .map_err(|why| anyhow::anyhow!("cannot run `{}`: {why}", argv[0].to_string_lossy()))?;
        }
        Target::Pid { .. } => {}
    }
    let what = match &target {
        Target::Pid { pid, duration } => format!("process {pid} {}", super::stop_signal::how_long(*duration)),
        Target::Command { argv } => format!("`{}` until it exits", argv[0].to_string_lossy()),
    };
    say!("numasleuth: counting {} events on {what}…", plan.events.len());
    // Both end on the shared stop: a watched process is counted until
    // Ctrl-C (or its duration) and reported; a command, whose process group
    // does not get the terminal's Ctrl-C, is passed it as SIGINT and
    // counted until it exits.
    let stop = super::stop_signal::stop_on_signals();
    let span_of = match &target {
        Target::Pid { duration, .. } => Some(*duration),
        Target::Command { .. } => None,
    };
    let start = Instant::now();
    let raw = count(
        &CountSpec {
            target,
            events: plan.events,
            max_threads: crate::bounds::THREADS_MAX as usize,
        },
        &stop,
    )?;
    let span = span_of.map(|planned| RunSpan::timed(start, planned, &stop));
    let summary = summarize(
        &raw,
        Context {
            not_tried: plan.not_tried,
            notes: plan.notes,
            paranoid,
        },
    );
    if let Some(why) = nothing_counted(&summary) {
        bail!("{why}");
    }
    let report = TextJson::new(pmu_json::build(&summary), |layout| pmu_text::render(&summary, layout));
    super::output::emit_run(root, &outputs, &report, span)?;
    Ok(passed_on(&raw.target))
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
