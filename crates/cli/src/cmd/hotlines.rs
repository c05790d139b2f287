//! `numasleuth hotlines PID`: the cache lines a process's threads fight
//! over, found without a PMU.
//!
//! Wiring only: the sampling pipeline is `numasleuth_app::hotlines`
//! (timer samples decoded to the lines they touch, ranked and named);
//! this prints what it found (`report`). See docs/hotlines.md.

use std::process::ExitCode;
use std::time::Instant;

use anyhow::bail;
use numasleuth_app::hotlines::{sample_process, Method, Sampling};
use numasleuth_kernel::Root;
use numasleuth_model::stop::RunSpan;
use numasleuth_report::export::TextJson;
use numasleuth_report::hotlines_json;
use numasleuth_report::hotlines_text;

use super::hot_args::{HotMethod, HotlinesArgs};

impl From<HotMethod> for Method {
    fn from(method: HotMethod) -> Self {
        match method {
            HotMethod::Auto => Method::Auto,
            HotMethod::IpDecode => Method::IpDecode,
            HotMethod::Precise => Method::Precise,
        }
    }
}

pub fn run(root: &Root, args: &HotlinesArgs) -> anyhow::Result<ExitCode> {
    let outputs = args.output.plan_text_json(args.json)?;
    let how = Sampling {
        duration: args.duration,
        top: args.top,
        frequency: args.frequency,
        method: args.method.into(),
    };
    let pid = args.pid();
    // Before the machine is read: a snapshot is refused for what it is.
    if !root.is_live() {
        bail!("hotlines needs the live system: it samples a running process, which a snapshot (--root) is not");
    }
    let stop = super::stop_signal::stop_on_signals();
    let start = Instant::now();
    let topo = super::topology(root)?;
    let sampled = sample_process(root, (pid, &topo), &how, &stop, &crate::output::Say)?;
    let doc = hotlines_json::HotlinesDocument::new(
        pid,
        &sampled.method,
        &sampled.raw,
        &sampled.tally,
        &sampled.lines,
        &sampled.precise,
        &sampled.notes,
    );
    let report = TextJson::new(hotlines_json::document(&doc), |_| hotlines_text::render(&doc));
    let span = RunSpan::timed(start, Some(args.duration), &stop);
    super::output::emit_run(root, &outputs, &report, Some(span))?;
    Ok(ExitCode::SUCCESS)
}
