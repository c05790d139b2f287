//! `numasleuth hotpages -p PID`: which memory of a process is hot, from
//! DAMON (no PMU), where it lives, and whether that is away from the
//! threads that use it.
//!
//! Wiring only: the pipeline is `numasleuth_app::hotpages` (DAMON checked,
//! a kdamond of numasleuth's own watching the process beside a reaper,
//! the regions heated, ranked, placed and named); this passes it the
//! reaper (this binary's hidden `damon-reaper`, wired in [`reaper`]) and
//! prints what it found (`report`). See docs/hotpages.md.

use std::ffi::OsString;
use std::process::ExitCode;

use numasleuth_app::hotpages::{HotpagesRequest, ReaperSpec};
use numasleuth_kernel::Root;
use numasleuth_probe::damon_reaper;
use numasleuth_report::export::TextJson;
use numasleuth_report::hotpages_json::{self, Parts};
use numasleuth_report::hotpages_text;

use super::hotpages_args::{DamonReaperArgs, HotpagesArgs};

pub fn run(root: &Root, args: &HotpagesArgs) -> anyhow::Result<ExitCode> {
    let outputs = args.output.plan_text_json(args.json)?;
    let topology = super::topology(root)?;
    let request = HotpagesRequest {
        pid: args.pid(),
        duration: args.duration,
        top: args.top,
    };
    let stop = super::stop_signal::stop_on_signals();
    let observed =
        numasleuth_app::hotpages::observe(root, &topology, request, reaper_spec(), &stop, &crate::output::Say)?;
    let doc = hotpages_json::build(Parts {
        raw: &observed.raw,
        comm: observed.comm,
        thread_nodes: observed.thread_nodes.ids().to_vec(),
        ranked: &observed.ranked,
        regions_total: observed.regions_total,
        regions_hot: observed.regions_hot,
        findings: observed.findings,
        notes: observed.notes,
    });
    super::output::emit(
        root,
        &outputs,
        &TextJson::new(&doc, |layout| hotpages_text::render(&doc, layout)),
    )?;
    Ok(ExitCode::SUCCESS)
}

/// The reaper `hotpages` starts beside itself: this binary's hidden
/// `damon-reaper --claims DIR` (`doctor --pid --measure` starts it too).
pub fn reaper_spec() -> ReaperSpec {
    ReaperSpec {
        program: std::env::current_exe(),
        args: vec![OsString::from("damon-reaper"), OsString::from("--claims")],
    }
}

/// `numasleuth damon-reaper`: waits for the `hotpages` that started it to
/// end (its stdin closes), then reaps.
pub fn reaper(root: &Root, args: &DamonReaperArgs) -> anyhow::Result<ExitCode> {
    damon_reaper::wait_then_reap(root, &args.claims, std::io::stdin().lock())?;
    Ok(ExitCode::SUCCESS)
}
