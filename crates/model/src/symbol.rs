//! What an ELF object contributes to a process, as data: symbols, the
//! class of each section, where a section sits at run time, and the name of
//! the code at an instruction address.
//!
//! `symbols` reads ELF files (object, addr2line) and produces these; the
//! model, `analyze` and `report` only consume them, so the pure crates do
//! not pull in an ELF or DWARF reader.

use serde::Serialize;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum SymbolKind {
    Function,
    Object,
    Tls,
    /// NOTYPE and the rest: linker markers (`_end`), assembler labels.
    Other,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Symbol {
    /// Demangled.
    pub name: String,
    /// As stored in the file.
    pub raw_name: String,
    /// Link-time address.
    pub address: u64,
    pub size_bytes: u64,
    pub section: Option<String>,
    pub kind: SymbolKind,
    pub global: bool,
}

impl Symbol {
    /// Matches a name as the user typed it: raw or demangled, or the
    /// demangled name without its parameter list (`db::apply::op`).
    pub fn matches(&self, wanted: &str) -> bool {
        self.raw_name == wanted
            || self.name == wanted
            || self.name.split_once('(').is_some_and(|(head, _)| head == wanted)
    }
}

/// How `inspect` counts a section's pages.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum SectionClass {
    /// Executable code: `.text`, `.plt`, `.init`.
    Text,
    /// Read-only data: `.rodata`, `.eh_frame`, `.dynsym`.
    ReadOnly,
    /// Initialised writable data: `.data`, `.data.rel.ro`, `.init_array`,
    /// `.dynamic`, `.tdata` (the TLS template).
    Data,
    /// Zero-initialised writable data: `.bss`.
    Bss,
    /// The global offset table: `.got`, `.got.plt`.
    Got,
    /// `.tbss`: takes no memory in the image (each thread's copy lives in
    /// its TLS block), so it is never placed on pages.
    TlsBss,
    /// Not loaded: debug info, symbol tables, comments.
    NotAllocated,
}

impl SectionClass {
    pub fn is_writable_static(self) -> bool {
        matches!(self, SectionClass::Data | SectionClass::Bss | SectionClass::Got)
    }
}

/// A loaded section at its run-time addresses.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SectionSpan {
    pub object: String,
    pub section: String,
    pub class: SectionClass,
    pub start: u64,
    pub end: u64,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct CodeLocation {
    /// The run-time address that was looked up.
    pub address: u64,
    pub object: Option<String>,
    /// The ELF function symbol holding the address, demangled.
    pub symbol: Option<String>,
    /// Bytes from the symbol's start to `address`.
    pub offset_bytes: Option<u64>,
    /// The innermost function per the debug info (the inlined one when the
    /// code was inlined); the symbol when there is no debug info.
    pub function: Option<String>,
    pub inlined_into: Option<String>,
    /// The source path as the debug info records it.
    pub path: Option<String>,
    pub line: Option<u32>,
}
