//! ELF files as `lines BINARY`, `inspect` and `watch` read them: headers,
//! symbols, demangled names, the cache-line map, and DWARF line tables.
//!
//! Input that does not start with the ELF magic goes to the demanglers
//! instead, which are recursive and see every symbol name of every file.

use std::fs;

use numasleuth_analyze::lines;
use numasleuth_symbols::debuginfo::DebugInfo;
use numasleuth_symbols::demangle::demangle;
use numasleuth_symbols::open::ObjectSource;
use numasleuth_symbols::{symbols, ElfImage};

use crate::text;

const PATH: &str = "fuzz.elf";
const LINE_BYTES: u64 = 64;

pub fn run(data: &[u8]) {
    if !data.starts_with(b"\x7fELF") {
        let _ = demangle(&text(data));
        return;
    }
    let Ok(image) = ElfImage::parse(data, PATH) else {
        return;
    };
    check_image(&image);
    let Ok(table) = symbols::read(data, &image, PATH) else {
        return;
    };
    for symbol in &table.symbols {
        assert!(symbol.matches(&symbol.raw_name) && symbol.matches(&symbol.name));
        assert!(!table.find(&symbol.raw_name).is_empty());
    }
    let data_symbols = lines::data_symbols(&table.symbols, 0);
    assert!(data_symbols
        .windows(2)
        .all(|w| (w[0].address, w[0].size) < (w[1].address, w[1].size)));
    for line in lines::shared_lines(&data_symbols, LINE_BYTES) {
        assert!(
            line.symbols.len() > 1,
            "a shared line at {:#x} with one symbol",
            line.address
        );
        assert_eq!(line.address % LINE_BYTES, 0);
    }
    for symbol in [data_symbols.first(), data_symbols.last()].into_iter().flatten() {
        let (found, _) = lines::around(&data_symbols, LINE_BYTES, &symbol.name).expect("a listed symbol is found");
        assert!(found.name == symbol.name || found.aliases.contains(&symbol.name));
    }
    if contains(data, b".debug_info") {
        debug_info(data, &table.symbols);
    }
}

fn check_image(image: &ElfImage) {
    for section in &image.sections {
        assert!(section.end() >= section.address);
        assert!(image.section(&section.name).is_some());
    }
    // Mapping a PT_LOAD segment's own first page always has a bias.
    for segment in &image.load_segments {
        let offset = segment.file_offset & !0xfff;
        let bias = image.load_bias(0x7f00_0000_0000, offset, segment.write, segment.exec);
        assert!(bias.is_some(), "no load bias for a mapping of segment {segment:?}");
    }
}

/// `watch`'s file:line lookup, which reads the object from a path.
fn debug_info(data: &[u8], symbols: &[numasleuth_symbols::Symbol]) {
    let dir = tempfile::tempdir().expect("temporary directory");
    let path = dir.path().join(PATH);
    fs::write(&path, data).expect("write the object");
    let source = ObjectSource::file(&path.display().to_string());
    if let Ok(Some(info)) = DebugInfo::load(&source) {
        let addresses: Vec<u64> = symbols.iter().take(16).map(|s| s.address).collect();
        if let Ok(found) = info.lookup(&addresses) {
            assert_eq!(found.len(), addresses.len());
        }
    }
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}
