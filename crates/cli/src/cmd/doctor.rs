//! `numasleuth doctor`: the main job. Every check, ranked findings, exit 1
//! with `--fail-on` when something at that severity or worse was found.

use std::process::ExitCode;

use numasleuth_analyze::doctor::{diagnose, gate, Gate};
use numasleuth_analyze::findings::Severity;
use numasleuth_analyze::topology::warnings;
use numasleuth_app::doctor::{self as investigate, ProcessRequest};
use numasleuth_kernel::procfs::process::{read_process_stat, ProcessError};
use numasleuth_kernel::Root;
use numasleuth_model::Topology;
use numasleuth_report::doctor_export::DoctorReport;
use numasleuth_report::topo_json;

use super::output::Aliases;
use crate::cli::{DoctorArgs, FailOn};

pub fn run(root: &Root, args: &DoctorArgs) -> anyhow::Result<ExitCode> {
    let plan = args.output.plan::<DoctorReport>(Aliases {
        json: args.json,
        html: args.html.as_deref(),
        ..Aliases::default()
    })?;
    let read = super::read_degraded(root)?;
    let host = numasleuth_kernel::gather::read_host(root, &read.readings);
    let topo = read.topology;
    let pid = args.pid.as_ref().map(super::pid_arg::ProcessRef::pid);
    if let Some(pid) = pid {
        // A PID the user named that is not there is a mistake to report,
        // not a check to skip.
        if let Err(e @ ProcessError::NoSuchProcess { .. }) = read_process_stat(root, pid) {
            if root.is_live() {
                anyhow::bail!("doctor --pid {pid}: {e}");
            }
            // Says which processes the snapshot holds.
            super::process_stat(root, pid)?;
        }
    }
    let mut diagnosis = diagnose(&topo, &host);
    if let Some(pid) = pid {
        // The process's observations, joined: a process that cannot be
        // read is a skipped check, never the end of the diagnosis.
        // Ctrl-C ends the live probes early only where they run; elsewhere
        // it keeps its usual meaning, as before the probes moved to the app.
        let stop = if root.is_live() && !args.quick {
            super::stop_signal::stop_on_signals()
        } else {
            numasleuth_model::stop::Stop::new()
        };
        let request = ProcessRequest { pid, quick: args.quick };
        let observed = investigate::observe(root, &topo, request, &stop, &crate::output::Say);
        investigate::judge(&observed, &topo, &mut diagnosis);
        let regions = super::doctor_hotpages::run(root, &topo, pid, args.measure, &mut diagnosis);
        numasleuth_analyze::join::with_hot_regions(&mut diagnosis.findings, &regions);
    }
    let measured = super::doctor_measure::run(root, args.measure, &mut diagnosis);
    diagnosis.rank();
    let mut all = read.warnings;
    all.extend(warnings(&topo));
    let report = DoctorReport {
        headline: headline(&topo),
        topo: &topo,
        topology: topo_json::build(&topo, all),
        diagnosis: &diagnosis,
        unread: &host.unread,
        measured: measured.as_ref(),
    };
    super::output::emit(root, &plan, &report)?;
    let threshold = args.fail_on.map(|f| match f {
        FailOn::Info => Severity::Info,
        FailOn::Warning => Severity::Warning,
        FailOn::Critical => Severity::Critical,
    });
    match gate(&diagnosis, threshold) {
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

fn headline(topo: &Topology) -> String {
    let cpu = topo.cpu_name().unwrap_or("unknown CPU");
    let mut line = format!(
        "{} node(s), {} CPUs ({} online), {cpu}",
        topo.nodes.len(),
        topo.cpus.len(),
        topo.online_cpus().len()
    );
    if topo.nodes.len() == 1 {
        line.push_str(
            "\none NUMA node: cross-node checks (placement, fallback, IRQ locality) have nothing to compare here",
        );
    }
    line
}
