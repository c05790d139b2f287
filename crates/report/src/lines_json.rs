//! `lines --json`, schema `numasleuth.lines/1`.
//!
//! Kept names: `schema`, `line_size`, `lines[]` with `address` (hex
//! string) and `symbols[]` (`name`, `size`, `section`). Fields may be
//! added, never renamed. Addresses are run-time ones when `pid` is set.

use numasleuth_analyze::lines::{Line, LineSymbol};
use serde::Serialize;

pub const SCHEMA: &str = "numasleuth.lines/1";

#[derive(Debug, Serialize)]
pub struct LinesJson<'a> {
    pub schema: &'static str,
    pub line_size: u64,
    pub object: &'a str,
    pub pid: Option<u32>,
    /// Added to every non-TLS link-time address.
    pub load_bias: String,
    pub sections: &'static [&'static str],
    pub symbol_source: &'a str,
    pub data_symbols: usize,
    /// With `--symbol`: the symbol asked for.
    pub symbol: Option<SymbolJson<'a>>,
    pub lines: Vec<LineJson<'a>>,
}

#[derive(Debug, Serialize)]
pub struct LineJson<'a> {
    pub address: String,
    pub symbols: Vec<SymbolJson<'a>>,
}

#[derive(Debug, Serialize)]
pub struct SymbolJson<'a> {
    pub name: &'a str,
    pub size: u64,
    pub section: &'a str,
    pub address: String,
    #[serde(skip_serializing_if = "<[String]>::is_empty")]
    pub aliases: &'a [String],
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub tls: bool,
}

pub fn symbol(s: &LineSymbol) -> SymbolJson<'_> {
    SymbolJson {
        name: &s.name,
        size: s.size,
        section: &s.section,
        address: format!("{:#x}", s.address),
        aliases: &s.aliases,
        tls: s.tls,
    }
}

pub fn lines(lines: &[Line]) -> Vec<LineJson<'_>> {
    lines
        .iter()
        .map(|l| LineJson {
            address: format!("{:#x}", l.address),
            symbols: l.symbols.iter().map(symbol).collect(),
        })
        .collect()
}
