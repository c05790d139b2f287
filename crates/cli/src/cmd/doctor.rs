//! `numasleuth doctor`: the main job. Every check, ranked findings, exit 1
//! with `--fail-on` when something at that severity or worse was found.
//! What runs is the application layer's (`numasleuth_app::doctor::machine`);
//! this renders it and turns its gate into the exit status.

use std::process::ExitCode;

use numasleuth_analyze::doctor::{gate, Gate};
use numasleuth_analyze::findings::Severity;
use numasleuth_app::doctor::machine::{self, MachineRequest};
use numasleuth_kernel::Root;
use numasleuth_model::stop::Stop;
use numasleuth_report::doctor_export::DoctorReport;
use numasleuth_report::topo_json;

use super::measure_plan::Bar;
use super::output::Aliases;
use crate::cli::{DoctorArgs, FailOn};

pub fn run(root: &Root, args: &DoctorArgs) -> anyhow::Result<ExitCode> {
    let plan = args.output.plan::<DoctorReport>(Aliases {
        json: args.json,
        html: args.html.as_deref(),
        ..Aliases::default()
    })?;
    let pid = args.pid.as_ref().map(super::pid_arg::ProcessRef::pid);
    // Ctrl-C ends the live probes and the measurements early (what they saw
    // is judged) only where they run; elsewhere it keeps its usual meaning.
    let probes = pid.is_some() && !args.quick;
    let stop = if root.is_live() && (probes || args.measure) {
        super::stop_signal::stop_on_signals()
    } else {
        Stop::new()
    };
    let request = MachineRequest {
        pid,
        quick: args.quick,
        measure: args.measure,
        reaper: super::hotpages::reaper_spec(),
    };
    let found = machine::diagnose(root, request, &stop, &crate::output::Say, &mut Bar::new())?;
    let report = DoctorReport {
        headline: found.headline,
        topo: &found.topology,
        topology: topo_json::build(&found.topology, found.warnings),
        diagnosis: &found.diagnosis,
        unread: &found.host.unread,
        measured: found.measured.as_ref(),
    };
    super::output::emit(root, &plan, &report)?;
    let threshold = args.fail_on.map(|f| match f {
        FailOn::Info => Severity::Info,
        FailOn::Warning => Severity::Warning,
        FailOn::Critical => Severity::Critical,
    });
    match gate(&found.diagnosis, threshold) {
        Gate::Pass => Ok(ExitCode::SUCCESS),
        Gate::Found => Ok(ExitCode::from(1)),
        Gate::Unsure(unsure) => {
            // No finding at the threshold, but a check that could have
            // raised one did not see all its input: the gate cannot pass
            // on a guess.
            say!(
                "numasleuth: --fail-on {}: not clean at that level, because checks that can report it could not \
                 read all their inputs: {} (exit 1); fix their access (run as root) or lower --fail-on",
                threshold.map_or("", Severity::as_str),
                numasleuth_report::doctor_text::joined(&unsure)
            );
            Ok(ExitCode::from(1))
        }
    }
}
