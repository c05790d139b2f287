//! Naming the code at an instruction address of a running process: the
//! object, the ELF function symbol plus offset, and with debug info the
//! (possibly inlined) function and its file:line.
//!
//! `watch` gets raw instruction addresses from the kernel; a person needs
//! "apply_op at victim.c:75". Addresses are grouped by object so each
//! object's symbols and DWARF are read once, and only for objects that
//! were actually sampled.

use std::collections::BTreeMap;

use crate::debuginfo::DebugInfo;
use crate::process::ProcessObjects;
use crate::symbols::{Symbol, SymbolKind};
pub use numasleuth_model::symbol::CodeLocation;

/// Functions of one object sorted by start, for lookups by address.
pub struct FunctionIndex {
    /// (link-time start, size in bytes, demangled name).
    functions: Vec<(u64, u64, String)>,
}

impl FunctionIndex {
    pub fn new(symbols: &[Symbol]) -> Self {
        let mut functions: Vec<(u64, u64, String)> = symbols
            .iter()
            .filter(|s| s.kind == SymbolKind::Function && s.address != 0)
            .map(|s| (s.address, s.size_bytes, s.name.clone()))
            .collect();
        // Of aliases at one address, the sized and global-looking first.
        functions.sort_by(|a, b| a.0.cmp(&b.0).then(b.1.cmp(&a.1)).then(a.2.cmp(&b.2)));
        functions.dedup_by_key(|f| f.0);
        FunctionIndex { functions }
    }

    /// The function holding a link-time address, with the offset into it.
    /// A symbol of size 0 is taken to run up to the next one.
    pub fn at(&self, address: u64) -> Option<(&str, u64)> {
        let index = self.functions.partition_point(|f| f.0 <= address).checked_sub(1)?;
        let (start, size, name) = &self.functions[index];
        let next = self.functions.get(index + 1).map_or(u64::MAX, |f| f.0);
        let end = if *size > 0 { start.saturating_add(*size) } else { next };
        (address < end).then(|| (name.as_str(), address - start))
    }
}

/// Names every address. `back_bytes` is subtracted before the lookup but
/// not from the reported address: x86 reports a data watchpoint at the
/// instruction *after* the access, so `watch` passes 1 to land inside the
/// accessing instruction. Notes say what could not be read.
pub fn locate_all(objects: &ProcessObjects, addresses: &[u64], back_bytes: u64) -> (Vec<CodeLocation>, Vec<String>) {
    let mut notes = Vec::new();
    let mut by_object: BTreeMap<usize, Vec<usize>> = BTreeMap::new();
    let mut out: Vec<CodeLocation> = addresses
        .iter()
        .map(|&address| CodeLocation {
            address,
            ..CodeLocation::default()
        })
        .collect();
    for (i, &address) in addresses.iter().enumerate() {
        let probe = address.saturating_sub(back_bytes);
        let found = objects
            .objects
            .iter()
            .position(|o| o.mapped.start <= probe && probe < o.mapped.end);
        if let Some(index) = found {
            by_object.entry(index).or_default().push(i);
        }
    }
    for (index, wanted) in by_object {
        let placed = &objects.objects[index];
        let links: Vec<u64> = wanted
            .iter()
            .map(|&i| addresses[i].saturating_sub(back_bytes).wrapping_sub(placed.bias))
            .collect();
        for &i in &wanted {
            out[i].object = Some(placed.path.clone());
        }
        match placed.source.image_and_symbols() {
            Ok((_, table)) => {
                let index = FunctionIndex::new(&table.symbols);
                for (&i, &link) in wanted.iter().zip(&links) {
                    if let Some((name, offset)) = index.at(link) {
                        out[i].symbol = Some(name.to_string());
                        // From the reported address, not the probe.
                        out[i].offset_bytes = Some(offset + back_bytes);
                    }
                }
            }
            Err(e) => notes.push(format!("no symbols: {e}")),
        }
        match DebugInfo::load(&placed.source).and_then(|d| d.map(|d| d.lookup(&links)).transpose()) {
            Ok(Some(lines)) => {
                for (&i, line) in wanted.iter().zip(lines) {
                    out[i].function = line.function;
                    out[i].inlined_into = line.inlined_into;
                    out[i].path = line.path;
                    out[i].line = line.line;
                }
            }
            Ok(None) => notes.push(format!(
                "{}: no debug info (build with -g, or install its -dbgsym package): functions from the symbol table, no file:line",
                placed.path
            )),
            Err(e) => notes.push(format!("debug info unreadable: {e}")),
        }
    }
    for location in &mut out {
        if location.function.is_none() {
            location.function = location.symbol.clone();
        }
    }
    (out, notes)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn function(name: &str, address: u64, size: u64) -> Symbol {
        Symbol {
            name: name.into(),
            raw_name: name.into(),
            address,
            size_bytes: size,
            section: Some(".text".into()),
            kind: SymbolKind::Function,
            global: true,
        }
    }

    #[test]
    fn address_to_function_and_offset() {
        let index = FunctionIndex::new(&[
            function("work", 0x1366, 0x80),
            function("apply_op", 0x12f5, 0x71),
            function("_start", 0x1100, 0),
            function("alias_of_work", 0x1366, 0),
        ]);
        assert_eq!(index.at(0x1326), Some(("apply_op", 0x31)));
        assert_eq!(index.at(0x1366), Some(("work", 0)));
        assert_eq!(index.at(0x13e6), None, "past the end of work");
        assert_eq!(index.at(0x1200), Some(("_start", 0x100)), "unsized runs to the next");
        assert_eq!(index.at(0x10ff), None);
        assert_eq!(FunctionIndex::new(&[]).at(5), None);
    }
}
