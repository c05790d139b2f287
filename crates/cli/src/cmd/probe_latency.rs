//! `numasleuth probe-latency`: one thread issues an operation at a fixed
//! intended rate and records each latency from its intended start
//! (corrected for coordinated omission) and from its actual start, while a
//! second thread samples the per-node memory signals; spikes are then
//! lined up against what the memory system did around them.
//!
//! Wiring only: the probe is `numasleuth_app::probe_latency`; output in
//! `report::probe_latency`.

use std::process::ExitCode;

use numasleuth_app::probe_latency::{ProbeRequest, Want};
use numasleuth_kernel::Root;
use numasleuth_report::probe_latency::ProbeReport;

use super::output::Aliases;
use super::probe_args::ProbeLatencyArgs;
use super::stop_signal::stop_on_signals;

pub fn run(root: &Root, args: &ProbeLatencyArgs) -> anyhow::Result<ExitCode> {
    let outputs = args.output.plan::<ProbeReport>(Aliases {
        json: args.json,
        svg: args.svg.as_deref(),
        ..Aliases::default()
    })?;
    let op = super::probe_args::op(args.op.as_deref()).map_err(anyhow::Error::msg)?;
    let request = ProbeRequest {
        op,
        node: args.node,
        rate_per_sec: args.rate,
        duration: args.duration,
        readers: Want::from_flags(args.readers, args.no_readers),
    };
    let topology = super::topology(root)?;
    // Before the probe's file exists, so ^C can never leave it behind.
    let stop = stop_on_signals();
    let (probe, span) = numasleuth_app::probe_latency::probe(root, &topology, &request, &stop, &crate::output::Say)?;
    super::output::emit_run(root, &outputs, &probe, Some(span))?;
    Ok(ExitCode::SUCCESS)
}
