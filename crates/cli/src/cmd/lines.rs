//! `numasleuth lines BINARY | --pid PID`: which data symbols share a cache
//! line, at link-time addresses or, with --pid, where the process has them:
//! the application layer's (`numasleuth_app::lines`), printed here.

use std::process::ExitCode;

use numasleuth_analyze::lines::SECTIONS;
use numasleuth_app::lines::LinesRequest;
use numasleuth_kernel::Root;
use numasleuth_report::{lines_json, lines_text};

use super::process_args::LinesArgs;
use numasleuth_report::export::TextJson;

pub fn run(root: &Root, args: &LinesArgs) -> anyhow::Result<ExitCode> {
    let outputs = args.output.plan_text_json(args.json)?;
    let request = LinesRequest {
        pid: args.pid(),
        binary: args.binary.clone(),
        line_size: args.line_size,
        symbol: args.symbol.clone(),
    };
    let doc = numasleuth_app::lines::run(root, &request)?;
    let (bias, symbol_source, target, lines) = (doc.load_bias, doc.symbol_source, &doc.symbol, &doc.lines);
    let addresses = match args.pid() {
        Some(pid) => format!("run-time addresses in process {pid}, load bias {bias:#x}"),
        None => "link-time addresses".to_string(),
    };
    let what = match &target {
        Some(t) => format!("the {}-byte line holding {} and its neighbours", args.line_size, t.name),
        None => format!("{} shared {}-byte line(s)", lines.len(), args.line_size),
    };
    let heading = format!(
        "{}: {what} in {} ({} data symbols from {symbol_source}; {addresses})",
        doc.object,
        SECTIONS.join(" "),
        doc.data_symbols
    );
    let report = TextJson::new(lines_json::document(&doc), |layout| {
        lines_text::render(&heading, lines, target.as_ref(), layout)
    });
    super::output::emit(root, &outputs, &report)?;
    Ok(ExitCode::SUCCESS)
}
