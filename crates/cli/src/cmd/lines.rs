//! `numasleuth lines BINARY | --pid PID`: which data symbols share a cache
//! line, at link-time addresses or, with --pid, where the process has them.

use std::process::ExitCode;

use anyhow::bail;
use numasleuth_analyze::lines::{around, data_symbols, shared_lines, SECTIONS};
use numasleuth_kernel::Root;
use numasleuth_report::{lines_json, lines_text};
use numasleuth_symbols::open::ObjectSource;
use numasleuth_symbols::symbols::SymbolSource;
use numasleuth_symbols::ProcessObjects;

use super::process_args::LinesArgs;
use numasleuth_report::export::TextJson;

pub fn run(root: &Root, args: &LinesArgs) -> anyhow::Result<ExitCode> {
    let outputs = args.output.plan_text_json(args.json)?;
    let (source, bias) = match (args.pid(), &args.binary) {
        (Some(pid), binary) => {
            super::process_stat(root, pid)?;
            let objects = ProcessObjects::load(root, pid)?;
            let name = binary.as_ref().map(|b| b.to_string_lossy().into_owned());
            let placed = match &name {
                Some(name) => objects.select(Some(name)).into_iter().next(),
                None => objects.main_object(),
            };
            let Some(placed) = placed else {
                match name {
                    Some(name) => bail!("process {pid} maps no ELF object named `{name}`"),
                    None => bail!("process {pid} maps no ELF program (a kernel thread, or its files are unreadable)"),
                }
            };
            (placed.source.clone(), placed.bias)
        }
        (None, Some(path)) => {
            let shown = path.to_string_lossy();
            if !path.exists() && !shown.is_empty() && shown.bytes().all(|b| b.is_ascii_digit()) {
                bail!("`{shown}` is not a file; to read process {shown}, use `numasleuth lines -p {shown}`");
            }
            (ObjectSource::file(&shown), 0)
        }
        (None, None) => bail!("give a BINARY or --pid PID"),
    };
    let (_, table) = source.image_and_symbols()?;
    let symbols = data_symbols(&table.symbols, bias);
    let (target, lines) = match &args.symbol {
        Some(name) => {
            let (target, lines) = around(&symbols, args.line_size, name)
                .ok_or_else(|| not_found(name, &source.shown, &table, symbols.len()))?;
            (Some(target), lines)
        }
        None => (None, shared_lines(&symbols, args.line_size)),
    };
    let symbol_source = match table.source {
        SymbolSource::Symtab => "symtab",
        SymbolSource::Dynsym => "dynsym",
        SymbolSource::None => "none",
    };
    let doc = lines_json::LinesJson {
        schema: lines_json::SCHEMA,
        line_size: args.line_size,
        object: &source.shown,
        pid: args.pid(),
        load_bias: format!("{bias:#x}"),
        sections: &SECTIONS,
        symbol_source,
        data_symbols: symbols.len(),
        symbol: target.as_ref().map(lines_json::symbol),
        lines: lines_json::lines(&lines),
    };
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
        source.shown,
        SECTIONS.join(" "),
        symbols.len()
    );
    let report = TextJson::new(doc, |layout| {
        lines_text::render(&heading, &lines, target.as_ref(), layout)
    });
    super::output::emit(root, &outputs, &report)?;
    Ok(ExitCode::SUCCESS)
}

fn not_found(
    name: &str,
    path: &str,
    table: &numasleuth_symbols::symbols::SymbolTable,
    data_symbols: usize,
) -> anyhow::Error {
    if table.source == SymbolSource::None {
        return anyhow::anyhow!("symbol `{name}` not found in {path}: the file is stripped (no .symtab or .dynsym)");
    }
    if let Some(other) = table.find(name).first() {
        return anyhow::anyhow!(
            "symbol `{name}` in {path} is in {}, not in {}: only data symbols share cache lines here",
            other.section.as_deref().unwrap_or("no section"),
            SECTIONS.join(" ")
        );
    }
    anyhow::anyhow!(
        "symbol `{name}` not found among the {data_symbols} data symbols ({}) of {path}",
        SECTIONS.join(" ")
    )
}
