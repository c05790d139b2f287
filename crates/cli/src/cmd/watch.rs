//! `numasleuth watch PID --symbol S | --addr A`: count the writes to one
//! address with a hardware watchpoint on every thread, and name the code
//! that writes.
//!
//! Wiring only: the watch is `numasleuth_app::watch`; this prints it.

use std::process::ExitCode;

use numasleuth_app::watch::WatchRequest;
use numasleuth_kernel::Root;
use numasleuth_report::export::TextJson;
use numasleuth_report::{watch_json, watch_text};

use super::process_args::WatchArgs;

pub fn run(root: &Root, args: &WatchArgs) -> anyhow::Result<ExitCode> {
    let outputs = args.output.plan_text_json(args.json)?;
    let request = WatchRequest {
        pid: args.pid(),
        symbol: args.symbol.clone(),
        object: args.object.clone(),
        addr: args.addr,
        len: args.len,
        rw: args.rw,
        duration: args.duration,
    };
    let stop = super::stop_signal::stop_on_signals();
    let watched = numasleuth_app::watch::watch(root, &request, &stop, &crate::output::Say)?;
    let summary = &watched.summary;
    let report = TextJson::new(watch_json::build(summary), |layout| watch_text::render(summary, layout));
    super::output::emit_run(root, &outputs, &report, Some(watched.span))?;
    Ok(ExitCode::SUCCESS)
}
