//! Naming a sampled cache line: the ELF data symbols on it (static data),
//! or the region it lies in ("heap", "stack of TID", ".bss of FILE" for
//! the anonymous tail of a binary's .bss, "anon", a file).
//!
//! Mappings and objects are read once, at the start, from one pass over
//! `/proc/PID/maps`, so a process that exits during sampling can still be
//! named.

use std::collections::BTreeMap;
use std::ops::Range;

use numasleuth_analyze::lines::{data_symbols, LineSymbol};
use numasleuth_kernel::procfs::maps::{Backing, Mapping};
use numasleuth_kernel::Root;
use numasleuth_model::mapping_kind::MappingKind;
use numasleuth_model::process::MemoryKind;
use numasleuth_symbols::code::FunctionIndex;
use numasleuth_symbols::MappedObjects;

pub struct Namer {
    pid: u32,
    mappings: Vec<Mapping>,
    /// Per object path: its data symbols at run-time addresses, sorted.
    symbols: Vec<(String, Vec<LineSymbol>)>,
    /// Per object: its mapped range, load bias and functions.
    functions: Vec<(Range<u64>, u64, FunctionIndex)>,
    /// Loaded sections at run-time addresses, with their object's path:
    /// the part of .bss past the file-backed page is an anonymous mapping,
    /// which only the ELF's section ranges tell from other anonymous memory.
    sections: Vec<(Range<u64>, String, String)>,
    pub notes: Vec<String>,
}

impl Namer {
    /// Reads `/proc/PID/maps` once: the mappings name regions, and the
    /// same lines place the ELF objects whose symbols name static data.
    pub fn load(root: &Root, pid: u32) -> Self {
        let mapped = MappedObjects::read(root, pid);
        let mut notes = mapped.notes("later ones are not named", "lines not named by region");
        let MappedObjects { mappings, objects, .. } = mapped;
        let mut symbols = Vec::new();
        let mut functions = Vec::new();
        let mut sections = Vec::new();
        match objects {
            Ok(objects) => {
                for object in &objects.objects {
                    if let Ok((image, table)) = object.source.image_and_symbols() {
                        for section in image.sections.iter().filter(|s| s.alloc && !s.tls && s.size_bytes > 0) {
                            let start = section.address.wrapping_add(object.bias);
                            let range = start..start.saturating_add(section.size_bytes);
                            sections.push((range, object.path.clone(), section.name.clone()));
                        }
                        functions.push((object.mapped.clone(), object.bias, FunctionIndex::new(&table.symbols)));
                        let list: Vec<LineSymbol> = data_symbols(&table.symbols, object.bias)
                            .into_iter()
                            .filter(|s| !s.tls)
                            .collect();
                        symbols.push((object.path.clone(), list));
                    }
                }
            }
            Err(e) => notes.push(format!("static data not named by symbol: {e}")),
        }
        Namer {
            pid,
            mappings,
            symbols,
            functions,
            sections,
            notes,
        }
    }

    /// The run-time start of the function holding `ip`, from ELF symbols.
    pub fn function_start(&self, ip: u64) -> Option<u64> {
        let (_, bias, index) = self.functions.iter().find(|(range, _, _)| range.contains(&ip))?;
        let (_, offset) = index.at(ip.wrapping_sub(*bias))?;
        ip.checked_sub(offset)
    }

    /// The data symbols overlapping `line..line+size`, with their byte range
    /// within the line.
    pub fn symbols_on(&self, line: u64, size: u64) -> Vec<(String, Range<u64>)> {
        let end = line.saturating_add(size);
        let mut out = Vec::new();
        for (_, list) in &self.symbols {
            let first = list.partition_point(|s| s.address.saturating_add(s.size) <= line);
            for s in list[first..].iter().take_while(|s| s.address < end) {
                let s_end = s.address.saturating_add(s.size);
                if s_end > line {
                    out.push((s.name.clone(), s.address.max(line) - line..s_end.min(end) - line));
                }
            }
        }
        out
    }

    /// `.bss of /usr/bin/app`: the loaded ELF section holding `address`.
    fn section_of(&self, address: u64) -> Option<String> {
        let (_, path, name) = self.sections.iter().find(|(range, _, _)| range.contains(&address))?;
        Some(format!("{name} of {path}"))
    }

    /// "heap", "stack of TID", ".bss of FILE", "anon", the mapped file, or
    /// "unmapped".
    pub fn region(&self, address: u64, stack_pointers: &BTreeMap<u32, u64>) -> String {
        let Some(m) = self.mappings.iter().find(|m| m.start <= address && address < m.end) else {
            return "unmapped".into();
        };
        let stack_of = || {
            stack_pointers
                .iter()
                .find(|(_, sp)| m.start <= **sp && **sp < m.end)
                .map(|(tid, _)| format!("stack of {tid}"))
        };
        // Heap and stack as every command classifies them; other mappings
        // are named by what backs them.
        match (m.kind(), &m.backing) {
            (MemoryKind::Heap, _) => "heap".into(),
            (MemoryKind::Stack, Backing::Special(_)) => stack_of().unwrap_or_else(|| format!("stack of {}", self.pid)),
            (_, Backing::Special(name)) => name.clone(),
            (_, Backing::Anonymous) => stack_of()
                .or_else(|| self.section_of(address))
                .unwrap_or_else(|| "anon".into()),
            (_, Backing::File { path, .. }) => path.clone(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use numasleuth_kernel::procfs::maps::Perms;

    /// Issue 36: a .bss global past the file-backed page (an anonymous
    /// mapping) was labelled "(anon)".
    #[test]
    fn the_anonymous_tail_of_bss_is_named_by_its_section() {
        let anon = |start: u64, end: u64| Mapping {
            start,
            end,
            perms: Perms::default(),
            offset_bytes: 0,
            dev_major: 0,
            dev_minor: 0,
            inode: 0,
            backing: Backing::Anonymous,
        };
        let namer = Namer {
            pid: 7,
            mappings: vec![anon(0x5000, 0x9000), anon(0x20000, 0x21000)],
            symbols: Vec::new(),
            functions: Vec::new(),
            sections: vec![(0x4800..0x6100, "/tmp/victim".into(), ".bss".into())],
            notes: Vec::new(),
        };
        let none = BTreeMap::new();
        assert_eq!(namer.region(0x5040, &none), ".bss of /tmp/victim");
        assert_eq!(namer.region(0x7000, &none), "anon");
        assert_eq!(namer.region(0x20000, &none), "anon");
    }
}
