//! `lines`: which data symbols share a cache line, at link-time addresses
//! in a file or, for a process, where it has them. The symbols come from
//! `symbols`, the lines from `analyze::lines`; the front-end renders them.

use std::path::PathBuf;

use numasleuth_analyze::lines::{around, data_symbols, shared_lines, LinesDocument, SECTIONS};
use numasleuth_kernel::Root;
use numasleuth_symbols::open::ObjectSource;
use numasleuth_symbols::symbols::{SymbolSource, SymbolTable};
use numasleuth_symbols::{ProcessObjects, SymbolError};

use crate::process_ref::MissingError;

/// What `lines` is asked, with no clap in it.
pub struct LinesRequest {
    /// The process whose mapped program (or `binary`) is read, at its
    /// run-time addresses.
    pub pid: Option<u32>,
    /// The file, or with `pid` the mapped object's name.
    pub binary: Option<PathBuf>,
    pub line_size: u64,
    /// Only the line holding this symbol, and its neighbours.
    pub symbol: Option<String>,
}

/// Why there are no lines to show.
#[derive(Debug, thiserror::Error)]
pub enum LinesError {
    #[error(transparent)]
    Missing(#[from] MissingError),
    #[error(transparent)]
    Objects(#[from] numasleuth_kernel::procfs::process::ProcessError),
    #[error("process {pid} maps no ELF object named `{name}`")]
    NoSuchObject { pid: u32, name: String },
    #[error("process {pid} maps no ELF program (a kernel thread, or its files are unreadable)")]
    NoProgram { pid: u32 },
    #[error("`{shown}` is not a file; to read process {shown}, use `numasleuth lines -p {shown}`")]
    PidAsFile { shown: String },
    #[error("give a BINARY or --pid PID")]
    NothingGiven,
    #[error(transparent)]
    Symbols(#[from] SymbolError),
    #[error("{0}")]
    NoSuchSymbol(String),
}

/// Reads the object's symbols and finds the lines they share.
pub fn run(root: &Root, request: &LinesRequest) -> Result<LinesDocument, LinesError> {
    let (source, bias) = object(root, request)?;
    let (_, table) = source.image_and_symbols()?;
    let symbols = data_symbols(&table.symbols, bias);
    let (target, lines) = match &request.symbol {
        Some(name) => {
            let (target, lines) = around(&symbols, request.line_size, name)
                .ok_or_else(|| LinesError::NoSuchSymbol(not_found(name, &source.shown, &table, symbols.len())))?;
            (Some(target), lines)
        }
        None => (None, shared_lines(&symbols, request.line_size)),
    };
    Ok(LinesDocument {
        line_size: request.line_size,
        object: source.shown,
        pid: request.pid,
        load_bias: bias,
        sections: &SECTIONS,
        symbol_source: match table.source {
            SymbolSource::Symtab => "symtab",
            SymbolSource::Dynsym => "dynsym",
            SymbolSource::None => "none",
        },
        data_symbols: symbols.len(),
        symbol: target,
        lines,
    })
}

/// The object to read and its load bias.
fn object(root: &Root, request: &LinesRequest) -> Result<(ObjectSource, u64), LinesError> {
    match (request.pid, &request.binary) {
        (Some(pid), binary) => {
            crate::process_ref::process_stat(root, pid)?;
            let objects = ProcessObjects::load(root, pid)?;
            let name = binary.as_ref().map(|b| b.to_string_lossy().into_owned());
            let placed = match &name {
                Some(name) => objects.select(Some(name)).into_iter().next(),
                None => objects.main_object(),
            };
            match (placed, name) {
                (Some(placed), _) => Ok((placed.source.clone(), placed.bias)),
                (None, Some(name)) => Err(LinesError::NoSuchObject { pid, name }),
                (None, None) => Err(LinesError::NoProgram { pid }),
            }
        }
        (None, Some(path)) => {
            let shown = path.to_string_lossy();
            if !path.exists() && !shown.is_empty() && shown.bytes().all(|b| b.is_ascii_digit()) {
                return Err(LinesError::PidAsFile {
                    shown: shown.into_owned(),
                });
            }
            Ok((ObjectSource::file(&shown), 0))
        }
        (None, None) => Err(LinesError::NothingGiven),
    }
}

/// Why `name` is not among the data symbols: a stripped file, a symbol in
/// another section, or none of that name.
fn not_found(name: &str, path: &str, table: &SymbolTable, data_symbols: usize) -> String {
    if table.source == SymbolSource::None {
        return format!("symbol `{name}` not found in {path}: the file is stripped (no .symtab or .dynsym)");
    }
    if let Some(other) = table.find(name).first() {
        return format!(
            "symbol `{name}` in {path} is in {}, not in {}: only data symbols share cache lines here",
            other.section.as_deref().unwrap_or("no section"),
            SECTIONS.join(" ")
        );
    }
    format!(
        "symbol `{name}` not found among the {data_symbols} data symbols ({}) of {path}",
        SECTIONS.join(" ")
    )
}
