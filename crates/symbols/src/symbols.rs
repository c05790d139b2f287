//! An ELF file's symbols: name (demangled), address, size and section.
//!
//! `.symtab` when the file has one, else `.dynsym` (a stripped binary still
//! exports its dynamic symbols); a fully stripped file has none, which is a
//! result ([`SymbolSource::None`]), not an error. Thread-local symbols are
//! given the address of their slot in the TLS template (PT_TLS vaddr plus
//! the offset the symbol holds), so `.tdata`/`.tbss` line maps use the same
//! address space as the section headers.

use std::collections::HashMap;

use object::{Object, ObjectSection, ObjectSymbol, ReadRef, SymbolSection};
use serde::Serialize;

use crate::demangle::demangle;
use crate::error::SymbolError;
use crate::image::ElfImage;
use crate::limits::{self, MAX_SYMBOLS, MAX_SYMBOL_NAME_BYTES};
pub use numasleuth_model::symbol::{Symbol, SymbolKind};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum SymbolSource {
    Symtab,
    Dynsym,
    /// Stripped of both tables.
    None,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SymbolTable {
    pub source: SymbolSource,
    pub symbols: Vec<Symbol>,
}

impl SymbolTable {
    pub fn find(&self, wanted: &str) -> Vec<&Symbol> {
        self.symbols.iter().filter(|s| s.matches(wanted)).collect()
    }
}

/// Reads the defined symbols of `data`, whose headers are `image`.
pub fn read<'data, R: ReadRef<'data>>(data: R, image: &ElfImage, path: &str) -> Result<SymbolTable, SymbolError> {
    read_capped(data, image, path, MAX_SYMBOLS, MAX_SYMBOL_NAME_BYTES)
}

/// [`read`], keeping at most `max_symbols` symbols and `max_name_bytes` of
/// their names (tests use small caps).
fn read_capped<'data, R: ReadRef<'data>>(
    data: R,
    image: &ElfImage,
    path: &str,
    max_symbols: usize,
    max_name_bytes: u64,
) -> Result<SymbolTable, SymbolError> {
    let file = object::File::parse(data).map_err(|e| SymbolError::malformed(path, e))?;
    let section_names: HashMap<usize, String> = file
        .sections()
        .filter_map(|s| Some((s.index().0, s.name().ok()?.to_string())))
        .collect();
    let tls_base = image.tls_segment.map(|t| t.vaddr);
    let collect = |iter: &mut dyn Iterator<Item = object::Symbol<'data, '_, R>>| -> Result<Vec<Symbol>, SymbolError> {
        let mut symbols = Vec::new();
        let mut name_bytes = 0u64;
        let wanted = iter
            .filter(|s| s.is_definition() || s.kind() == object::SymbolKind::Tls)
            .filter(|s| !s.is_undefined());
        for s in wanted {
            let Some(raw) = s.name().ok().filter(|n| !n.is_empty()) else {
                continue;
            };
            let kind = match s.kind() {
                object::SymbolKind::Text => SymbolKind::Function,
                object::SymbolKind::Data => SymbolKind::Object,
                object::SymbolKind::Tls => SymbolKind::Tls,
                object::SymbolKind::Section | object::SymbolKind::File => continue,
                _ => SymbolKind::Other,
            };
            name_bytes += raw.len() as u64;
            if symbols.len() == max_symbols || name_bytes > max_name_bytes {
                return Err(limits::too_many_symbols(path, max_symbols, max_name_bytes));
            }
            let section = match s.section() {
                SymbolSection::Section(index) => section_names.get(&index.0).cloned(),
                _ => None,
            };
            let address = match (kind, tls_base) {
                (SymbolKind::Tls, Some(base)) => base.wrapping_add(s.address()),
                _ => s.address(),
            };
            symbols.push(Symbol {
                name: demangle(raw),
                raw_name: raw.to_string(),
                address,
                size_bytes: s.size(),
                section,
                kind,
                global: s.is_global(),
            });
        }
        Ok(symbols)
    };
    let symtab = collect(&mut file.symbols())?;
    if !symtab.is_empty() {
        return Ok(SymbolTable {
            source: SymbolSource::Symtab,
            symbols: symtab,
        });
    }
    let dynsym = collect(&mut file.dynamic_symbols())?;
    let source = if dynsym.is_empty() {
        SymbolSource::None
    } else {
        SymbolSource::Dynsym
    };
    Ok(SymbolTable {
        source,
        symbols: dynsym,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use object::read::ReadCache;

    #[test]
    fn symbol_tables_over_the_caps_are_refused() {
        // This test binary: a real symbol table of thousands of symbols.
        let file = std::fs::File::open(std::env::current_exe().unwrap()).unwrap();
        let cache = ReadCache::new(file);
        let image = ElfImage::parse(&cache, "self").unwrap();
        let table = read(&cache, &image, "self").unwrap();
        assert!(table.symbols.len() > 100, "{}", table.symbols.len());
        let err = read_capped(&cache, &image, "self", 100, 1 << 30).unwrap_err();
        assert!(err.to_string().contains("more than 100 symbols"), "{err}");
        let err = read_capped(&cache, &image, "self", 1 << 30, 1024).unwrap_err();
        assert!(err.to_string().contains("or 1 KiB of symbol names"), "{err}");
    }
}
