//! The static cache-line sharing map: which symbols of `.data`, `.bss`,
//! `.tdata` and `.tbss` share a cache line.
//!
//! A write to one symbol invalidates the whole line in every other core's
//! cache, so a hot global next to a read-mostly one (the incident's
//! `nil_root` beside the logger's level) makes the innocent reader miss
//! too. Only the link-time layout is needed, so this is a pure function of
//! the symbol table; `bias` shifts it to a running process's addresses.
//! Thread-local symbols are never shifted: each thread has its own copy.

use std::collections::BTreeMap;

use numasleuth_model::symbol::{Symbol, SymbolKind};
use serde::Serialize;

/// The sections whose lines are mapped.
pub const SECTIONS: [&str; 4] = [".data", ".bss", ".tdata", ".tbss"];

/// A data symbol on a line. Its fields are in the order `lines --json`
/// writes them; addresses are hex strings there.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct LineSymbol {
    /// Demangled.
    pub name: String,
    pub size: u64,
    pub section: String,
    #[serde(serialize_with = "numasleuth_model::hex::serialize")]
    pub address: u64,
    /// Other names for the same bytes (weak aliases such as `environ`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub aliases: Vec<String>,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub tls: bool,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Line {
    #[serde(serialize_with = "numasleuth_model::hex::serialize")]
    pub address: u64,
    pub symbols: Vec<LineSymbol>,
}

/// `lines`' document, as `numasleuth.lines/1` writes it (report puts the
/// schema over it): what the lines were read from, then the symbol asked
/// for and the lines (addresses as hex strings). Text renders the same value.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct LinesDocument {
    pub line_size: u64,
    /// The object as shown to a person (its path, or the process's).
    pub object: String,
    pub pid: Option<u32>,
    /// Added to every non-TLS link-time address (0 for a file); a hex
    /// string.
    #[serde(serialize_with = "numasleuth_model::hex::serialize")]
    pub load_bias: u64,
    pub sections: &'static [&'static str],
    /// The table the symbols came from: `symtab`, `dynsym` or `none`.
    pub symbol_source: &'static str,
    pub data_symbols: usize,
    /// With `--symbol`: the symbol asked for.
    pub symbol: Option<LineSymbol>,
    pub lines: Vec<Line>,
}

/// Data symbols of the mapped sections, one per distinct (address, size),
/// sorted by address, with run-time addresses.
pub fn data_symbols(symbols: &[Symbol], bias: u64) -> Vec<LineSymbol> {
    let mut merged: BTreeMap<(u64, u64), LineSymbol> = BTreeMap::new();
    for symbol in symbols {
        let Some(section) = symbol.section.as_deref().filter(|s| SECTIONS.contains(s)) else {
            continue;
        };
        // Size-0 symbols are markers (`_edata`, `__TMC_END__`, `__dso_handle`):
        // they hold no bytes, so they share nothing.
        if symbol.kind == SymbolKind::Function || symbol.size_bytes == 0 {
            continue;
        }
        let tls = symbol.kind == SymbolKind::Tls || matches!(section, ".tdata" | ".tbss");
        let address = if tls {
            symbol.address
        } else {
            symbol.address.wrapping_add(bias)
        };
        match merged.get_mut(&(address, symbol.size_bytes)) {
            Some(existing) => {
                // Prefer the global name; keep the rest as aliases.
                if symbol.global && !existing.aliases.contains(&symbol.name) && existing.name != symbol.name {
                    let old = std::mem::replace(&mut existing.name, symbol.name.clone());
                    existing.aliases.push(old);
                } else if existing.name != symbol.name && !existing.aliases.contains(&symbol.name) {
                    existing.aliases.push(symbol.name.clone());
                }
            }
            None => {
                merged.insert(
                    (address, symbol.size_bytes),
                    LineSymbol {
                        name: symbol.name.clone(),
                        address,
                        size: symbol.size_bytes,
                        section: section.to_string(),
                        aliases: Vec::new(),
                        tls,
                    },
                );
            }
        }
    }
    merged.into_values().collect()
}

fn line_range(symbol: &LineSymbol, line_size: u64) -> (u64, u64) {
    let first = symbol.address / line_size;
    let last = symbol.address.saturating_add(symbol.size.max(1) - 1) / line_size;
    (first, last)
}

/// Every line holding more than one symbol, in address order.
/// `line_size` must be a power of two.
pub fn shared_lines(symbols: &[LineSymbol], line_size: u64) -> Vec<Line> {
    // A symbol can share only its first and last line: the lines between
    // are wholly its own.
    let mut by_line: BTreeMap<u64, Vec<usize>> = BTreeMap::new();
    for (index, symbol) in symbols.iter().enumerate() {
        let (first, last) = line_range(symbol, line_size);
        by_line.entry(first).or_default().push(index);
        if last != first {
            by_line.entry(last).or_default().push(index);
        }
    }
    by_line
        .into_iter()
        .filter(|(_, members)| members.len() > 1)
        .map(|(line, members)| Line {
            address: line * line_size,
            symbols: members.into_iter().map(|i| symbols[i].clone()).collect(),
        })
        .collect()
}

/// The line(s) holding the symbol named `wanted` and one line either side,
/// whether shared or not; `None` when no data symbol has that name.
pub fn around(symbols: &[LineSymbol], line_size: u64, wanted: &str) -> Option<(LineSymbol, Vec<Line>)> {
    let target = symbols
        .iter()
        .find(|s| s.name == wanted || s.aliases.iter().any(|a| a == wanted))
        .or_else(|| {
            symbols
                .iter()
                .find(|s| s.name.split_once('(').is_some_and(|(h, _)| h == wanted))
        })?;
    let (first, last) = line_range(target, line_size);
    // A huge array: show its first and last line, not every line between.
    let last = last.min(first + 3);
    let from = first.saturating_sub(1);
    // No line after the last one in the address space (a symbol there
    // would make `line * line_size` overflow).
    let to = last.saturating_add(1).min(u64::MAX / line_size);
    let lines = (from..=to)
        .map(|line| Line {
            address: line * line_size,
            symbols: symbols
                .iter()
                .filter(|s| s.tls == target.tls)
                .filter(|s| {
                    let (a, b) = line_range(s, line_size);
                    a <= line && line <= b
                })
                .cloned()
                .collect(),
        })
        .collect();
    Some((target.clone(), lines))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sym(name: &str, address: u64, size: u64, section: &str) -> Symbol {
        Symbol {
            name: name.into(),
            raw_name: name.into(),
            address,
            size_bytes: size,
            section: Some(section.into()),
            kind: SymbolKind::Object,
            global: true,
        }
    }

    /// The victim's .bss as `nm` shows it (PIE build, gcc 12).
    fn victim() -> Vec<Symbol> {
        vec![
            sym("completed.0", 0x40c0, 1, ".bss"),
            sym("nil_root", 0x4100, 8, ".bss"),
            sym("log_level", 0x4108, 4, ".bss"),
            sym("ops_per_worker", 0x4120, 2048, ".bss"),
            sym("scratch", 0x4920, 12288, ".bss"),
            sym("op_batch", 0x4098, 4, ".data"),
            sym("main", 0x1200, 300, ".text"),
            Symbol {
                kind: SymbolKind::Other,
                ..sym("_end", 0x7928, 0, ".bss")
            },
        ]
    }

    #[test]
    fn nil_root_and_log_level_share_a_line() {
        let symbols = data_symbols(&victim(), 0);
        assert!(symbols.iter().all(|s| s.name != "main" && s.name != "_end"));
        let lines = shared_lines(&symbols, 64);
        let line = lines.iter().find(|l| l.address == 0x4100).expect("line 0x4100");
        let names: Vec<&str> = line.symbols.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["nil_root", "log_level", "ops_per_worker"]);
        // ops_per_worker's last line is shared with scratch's first.
        assert!(lines.iter().any(|l| l.address == 0x4900));
        // With 128-byte lines (adjacent-line prefetch pairs) more share.
        assert!(shared_lines(&symbols, 128).len() >= lines.len());
    }

    #[test]
    fn bias_moves_everything_but_tls() {
        let mut symbols = victim();
        symbols.push(Symbol {
            kind: SymbolKind::Tls,
            ..sym("tls_counter", 0x3000, 8, ".tbss")
        });
        let placed = data_symbols(&symbols, 0x5555_5555_4000);
        let nil = placed.iter().find(|s| s.name == "nil_root").unwrap();
        assert_eq!(nil.address, 0x5555_5555_8100);
        let tls = placed.iter().find(|s| s.name == "tls_counter").unwrap();
        assert_eq!((tls.address, tls.tls), (0x3000, true));
    }

    #[test]
    fn aliases_are_one_symbol() {
        let symbols = vec![
            Symbol {
                global: false,
                ..sym("__environ_local", 0x10, 8, ".bss")
            },
            sym("environ", 0x10, 8, ".bss"),
            sym("next", 0x18, 8, ".bss"),
        ];
        let merged = data_symbols(&symbols, 0);
        assert_eq!(merged.len(), 2);
        assert_eq!(merged[0].name, "environ");
        assert_eq!(merged[0].aliases, ["__environ_local"]);
    }

    #[test]
    fn around_shows_neighbours_even_when_alone() {
        let symbols = data_symbols(&victim(), 0);
        let (target, lines) = around(&symbols, 64, "log_level").unwrap();
        assert_eq!(target.address, 0x4108);
        assert_eq!(lines.len(), 3);
        assert_eq!(lines[1].address, 0x4100);
        assert_eq!(lines[0].address, 0x40c0);
        assert_eq!(lines[0].symbols[0].name, "completed.0");
        let (_, lines) = around(&symbols, 64, "scratch").unwrap();
        assert_eq!(
            lines.len(),
            6,
            "first line, three more of the array, and one either side"
        );
        assert!(around(&symbols, 64, "no_such_symbol").is_none());
        assert!(around(&symbols, 64, "main").is_none(), "functions are not data");
    }

    /// Found while writing the `elf_symbols` fuzz harness, and confirmed
    /// with it (fuzz/regressions/elf_symbols/symbol-in-last-line, the seed
    /// object with `counter` moved to 0xffffffffffffffc8): a data symbol in
    /// the address space's last cache line made the line after it overflow.
    #[test]
    fn around_a_symbol_in_the_last_line() {
        let symbols = data_symbols(&[sym("top", u64::MAX - 55, 4, ".bss")], 0);
        let (found, lines) = around(&symbols, 64, "top").unwrap();
        assert_eq!(found.name, "top");
        let last = lines.last().unwrap();
        assert_eq!(last.address, u64::MAX - 63);
        assert_eq!(last.symbols.len(), 1);
    }
}
