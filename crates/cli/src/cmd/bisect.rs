//! `numasleuth bisect PID --metric-cmd CMD (--section NAME | --range A-B)`:
//! which page's placement changes the workload's rate, found by moving
//! halves of the candidate pages to the other node and back.
//!
//! Wiring only: the pipeline is `numasleuth_app::bisect` (the pages asked
//! for, the search on live pages through a journal, the restore); this
//! connects Ctrl-C to its stop token (with `--apply`, in the variant that
//! never exits before every page is back), prints its document and then
//! raises how the search ended.

use std::process::ExitCode;

use numasleuth_app::bisect::{self, BisectRequest};
use numasleuth_app::page_targets::Asked;
use numasleuth_kernel::Root;
use numasleuth_model::stop::Stop;
use numasleuth_report::export::TextJson;
use numasleuth_report::{bisect_json, bisect_text};

use super::bisect_args::BisectArgs;

pub fn run(root: &Root, args: &BisectArgs) -> anyhow::Result<ExitCode> {
    let outputs = args.output.plan_text_json(args.json)?;
    bisect::require_live(root)?;
    let topology = super::topology(root)?;
    let request = BisectRequest {
        asked: Asked {
            pid: args.pid(),
            range: args.range,
            symbol: None,
            section: args.section.clone(),
            object: args.object.clone(),
        },
        metric_cmd: args.metric_cmd.clone(),
        lower_is_better: args.lower_is_better,
        to_node: args.to_node,
        settle: args.settle,
        rounds: args.rounds,
        min_change: args.min_change,
        metric_timeout: args.metric_timeout,
        apply: args.apply,
        journal: args.journal.clone(),
    };
    // The dry run moves nothing: a signal ends it as it would any program.
    let stop = if args.apply {
        super::stop_signal::stop_on_signals_until_undone()
    } else {
        Stop::new()
    };
    let bisected = bisect::run(root, &topology, &request, &stop)?;
    let doc = &bisected.doc;
    super::output::emit(
        root,
        &outputs,
        &TextJson::new(bisect_json::document(doc), |layout| bisect_text::render(doc, layout)),
    )?;
    bisected.ended?;
    Ok(ExitCode::SUCCESS)
}
