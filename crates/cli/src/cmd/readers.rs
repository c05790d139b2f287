//! `numasleuth readers`: which processes open the kernel files whose reads
//! take a lock the allocator, reclaim or page faults need, how often, and
//! who started them.
//!
//! Wiring only: the watch is `numasleuth_app::readers`; output from
//! `report::readers_*`.

use std::process::ExitCode;

use numasleuth_app::readers::ReadersRequest;
use numasleuth_kernel::Root;
use numasleuth_probe::readers::Choice;
use numasleuth_report::export::TextJson;
use numasleuth_report::{readers_json, readers_text};

use super::readers_args::{ReadersArgs, ReadersMethod};
use super::stop_signal::stop_on_signals;

/// The probe's choice for `--method`.
pub fn choice(method: ReadersMethod) -> Choice {
    match method {
        ReadersMethod::Auto => Choice::Auto,
        ReadersMethod::Kprobe => Choice::Kprobe,
        ReadersMethod::Tracepoint => Choice::Tracepoint,
        ReadersMethod::FdScan => Choice::FdScan,
    }
}

pub fn run(root: &Root, args: &ReadersArgs) -> anyhow::Result<ExitCode> {
    let outputs = args.output.plan_text_json(args.json)?;
    let topology = super::topology(root)?;
    let request = ReadersRequest {
        files: args.files(),
        choice: choice(args.method),
        duration: args.duration,
    };
    let stop = stop_on_signals();
    let watched = numasleuth_app::readers::watch(root, &topology, request, &stop, &crate::output::Say)?;
    let doc = readers_json::ReadersDocument::new(&watched.summary, &watched.raw.opens, &watched.findings);
    let json = readers_json::document(&doc);
    super::output::emit_run(
        root,
        &outputs,
        &TextJson::new(json, |_| readers_text::render(doc.summary, doc.findings)),
        Some(watched.span),
    )?;
    Ok(ExitCode::SUCCESS)
}
