//! `numasleuth move PID (--range | --symbol | --section) --to-node N`:
//! migrate pages of a live process, dry run unless `--apply`.
//!
//! Wiring only: the pipeline is `numasleuth_app::moves` (the pages asked
//! for resolved and placed, the plan, with `--apply` the journalled move
//! and both verifications); this prints its document (`report`) and then
//! raises what `--apply` left behind.

use std::process::ExitCode;

use numasleuth_app::moves::{self, MoveRequest};
use numasleuth_app::page_targets::Asked;
use numasleuth_kernel::Root;
use numasleuth_report::export::TextJson;
use numasleuth_report::{move_json, move_text};

use super::process_args::MoveArgs;

pub fn run(root: &Root, args: &MoveArgs) -> anyhow::Result<ExitCode> {
    let outputs = args.output.plan_text_json(args.json)?;
    moves::require_live(root)?;
    let topology = super::topology(root)?;
    let request = MoveRequest {
        asked: Asked {
            pid: args.pid(),
            range: args.range,
            symbol: args.symbol.clone(),
            section: args.section.clone(),
            object: args.object.clone(),
        },
        to_node: args.to_node,
        apply: args.apply,
        journal: args.journal.clone(),
    };
    let doc = moves::run(root, &topology, &request)?;
    let report = TextJson::new(move_json::document(&doc), |layout| move_text::render(&doc, layout));
    super::output::emit(root, &outputs, &report)?;
    if let Some(left) = moves::leftovers(&doc, &request) {
        return Err(left.into());
    }
    Ok(ExitCode::SUCCESS)
}
