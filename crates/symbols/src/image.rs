//! An ELF file's section and program headers: what each section is, where
//! it sits at link time, and how the loader maps the file.
//!
//! Only headers are read (through a read cache), never the whole file, so
//! looking at every shared object of a large process stays cheap. Symbols
//! are read separately ([`crate::symbols`]) when a command needs them.

use object::read::elf::{ElfFile, FileHeader, ProgramHeader};
use object::{Endianness, FileKind, Object, ObjectSection, ReadRef};
use serde::Serialize;

use crate::error::SymbolError;
pub use numasleuth_model::symbol::SectionClass;

const ET_EXEC: u16 = 2;
const ET_DYN: u16 = 3;
const PT_LOAD: u32 = 1;
const PT_INTERP: u32 = 3;
const PT_TLS: u32 = 7;
const PF_X: u32 = 1;
const PF_W: u32 = 2;
const SHF_WRITE: u64 = 0x1;
const SHF_ALLOC: u64 = 0x2;
const SHF_EXECINSTR: u64 = 0x4;
const SHF_TLS: u64 = 0x400;
const SHT_NOBITS: u32 = 8;

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Section {
    pub index: usize,
    pub name: String,
    /// Link-time address; add the load bias for the run-time one.
    pub address: u64,
    pub size_bytes: u64,
    /// `None` for sections with no bytes in the file (`.bss`).
    pub file_offset: Option<u64>,
    pub alloc: bool,
    pub write: bool,
    pub exec: bool,
    pub tls: bool,
    pub class: SectionClass,
}

impl Section {
    pub fn end(&self) -> u64 {
        self.address.saturating_add(self.size_bytes)
    }
}

/// A `PT_LOAD` (or `PT_TLS`) program header.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct LoadSegment {
    pub vaddr: u64,
    pub mem_size_bytes: u64,
    pub file_offset: u64,
    pub file_size_bytes: u64,
    pub align_bytes: u64,
    pub write: bool,
    pub exec: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum ElfType {
    /// ET_EXEC: loaded at its link addresses (bias 0).
    Executable,
    /// ET_DYN: a PIE or shared object, loaded anywhere.
    Dynamic,
    Other,
}

/// The headers of one ELF file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ElfImage {
    /// As it was opened (e.g. `/proc/1/map_files/…` or `/usr/bin/app`).
    pub opened_from: String,
    pub elf_type: ElfType,
    pub is_64_bit: bool,
    /// Has PT_INTERP: a dynamically linked program, not a library.
    pub has_interp: bool,
    pub sections: Vec<Section>,
    pub load_segments: Vec<LoadSegment>,
    pub tls_segment: Option<LoadSegment>,
}

impl ElfImage {
    /// Reads the headers. `path` is only used in errors.
    pub fn parse<'data, R: ReadRef<'data>>(data: R, path: &str) -> Result<Self, SymbolError> {
        match FileKind::parse(data) {
            Ok(FileKind::Elf32) => parse_elf::<object::elf::FileHeader32<Endianness>, R>(data, path, false),
            Ok(FileKind::Elf64) => parse_elf::<object::elf::FileHeader64<Endianness>, R>(data, path, true),
            _ => Err(SymbolError::NotElf {
                path: numasleuth_kernel::error::escape(path),
            }),
        }
    }

    pub fn section(&self, name: &str) -> Option<&Section> {
        self.sections.iter().find(|s| s.name == name)
    }

    /// The load bias of a mapping of this file that starts at `map_start`
    /// and maps file offset `map_offset` with the given permissions:
    /// run-time address minus link-time address.
    ///
    /// The loader maps each PT_LOAD segment from its page-aligned file
    /// offset to its page-aligned address, so within a segment
    /// `vaddr(offset) = p_vaddr - p_offset + offset`. When two segments
    /// share a file page (old layouts without separate code pages) the one
    /// whose write/exec flags match the mapping wins.
    pub fn load_bias(&self, map_start: u64, map_offset: u64, write: bool, exec: bool) -> Option<u64> {
        let page = 4096u64;
        let covers = |s: &&LoadSegment| {
            let first = s.file_offset & !(page - 1);
            map_offset >= first && map_offset < s.file_offset.saturating_add(s.file_size_bytes.max(1))
        };
        let starts_here = |s: &LoadSegment| s.file_offset & !(page - 1) == map_offset;
        // A segment that starts on this page beats one that merely covers
        // it (the RELRO part of the RW segment is mapped r--, on a page the
        // read-only segment before it may also cover); then matching flags.
        let segment = self.load_segments.iter().filter(covers).max_by_key(|s| {
            (
                starts_here(s) && s.write == write,
                starts_here(s),
                s.write == write && s.exec == exec,
                s.write == write,
            )
        })?;
        let link = segment.vaddr.wrapping_sub(segment.file_offset).wrapping_add(map_offset);
        Some(map_start.wrapping_sub(link))
    }
}

fn parse_elf<'data, Elf, R>(data: R, path: &str, is_64_bit: bool) -> Result<ElfImage, SymbolError>
where
    Elf: FileHeader<Endian = Endianness>,
    R: ReadRef<'data>,
{
    let file = ElfFile::<Elf, R>::parse(data).map_err(|e| SymbolError::malformed(path, e))?;
    let endian = file.endian();
    let elf_type = match file.elf_header().e_type(endian).0 {
        ET_EXEC => ElfType::Executable,
        ET_DYN => ElfType::Dynamic,
        _ => ElfType::Other,
    };
    let mut load_segments = Vec::new();
    let mut tls_segment = None;
    let mut has_interp = false;
    for header in file.elf_program_headers() {
        let flags = header.p_flags(endian).0;
        let segment = LoadSegment {
            vaddr: header.p_vaddr(endian).into(),
            mem_size_bytes: header.p_memsz(endian).into(),
            file_offset: header.p_offset(endian).into(),
            file_size_bytes: header.p_filesz(endian).into(),
            align_bytes: header.p_align(endian).into(),
            write: flags & PF_W != 0,
            exec: flags & PF_X != 0,
        };
        match header.p_type(endian).0 {
            PT_LOAD => load_segments.push(segment),
            PT_TLS => tls_segment = Some(segment),
            PT_INTERP => has_interp = true,
            _ => {}
        }
    }
    let mut sections = Vec::new();
    for section in file.sections() {
        let Ok(name) = section.name() else { continue };
        let (sh_type, sh_flags) = match section.flags() {
            object::SectionFlags::Elf { sh_type, sh_flags } => (sh_type.0, sh_flags.0),
            _ => (0, 0),
        };
        let nobits = sh_type == SHT_NOBITS;
        let (alloc, write, exec, tls) = (
            sh_flags & SHF_ALLOC != 0,
            sh_flags & SHF_WRITE != 0,
            sh_flags & SHF_EXECINSTR != 0,
            sh_flags & SHF_TLS != 0,
        );
        let class = classify(name, alloc, write, exec, tls, nobits);
        sections.push(Section {
            index: section.index().0,
            name: name.to_string(),
            address: section.address(),
            size_bytes: section.size(),
            file_offset: if nobits {
                None
            } else {
                section.file_range().map(|(offset, _)| offset)
            },
            alloc,
            write,
            exec,
            tls,
            class,
        });
    }
    Ok(ElfImage {
        opened_from: path.to_string(),
        elf_type,
        is_64_bit,
        has_interp,
        sections,
        load_segments,
        tls_segment,
    })
}

fn classify(name: &str, alloc: bool, write: bool, exec: bool, tls: bool, nobits: bool) -> SectionClass {
    match () {
        _ if !alloc => SectionClass::NotAllocated,
        _ if tls && nobits => SectionClass::TlsBss,
        _ if exec => SectionClass::Text,
        _ if name.starts_with(".got") => SectionClass::Got,
        _ if write && nobits => SectionClass::Bss,
        _ if write || tls => SectionClass::Data,
        // RELRO sections keep their write flag; anything else read-only.
        _ => SectionClass::ReadOnly,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn segment(vaddr: u64, offset: u64, size: u64, write: bool, exec: bool) -> LoadSegment {
        LoadSegment {
            vaddr,
            mem_size_bytes: size,
            file_offset: offset,
            file_size_bytes: size,
            align_bytes: 0x1000,
            write,
            exec,
        }
    }

    fn image(segments: Vec<LoadSegment>) -> ElfImage {
        ElfImage {
            opened_from: "/x".into(),
            elf_type: ElfType::Dynamic,
            is_64_bit: true,
            has_interp: true,
            sections: vec![],
            load_segments: segments,
            tls_segment: None,
        }
    }

    #[test]
    fn bias_of_a_pie_with_separate_code_pages() {
        // `readelf -lW /usr/bin/cat` on the development VM (Debian 12), and
        // the maps of a live cat: r--p 0 at 0x55f6fe999000, r-xp 0x2000,
        // r--p 0x7000, r--p 0x9000 (the RELRO part of the RW segment, on a
        // page the third segment also covers), rw-p 0xa000.
        let cat = image(vec![
            segment(0, 0, 0x1720, false, false),
            segment(0x2000, 0x2000, 0x4da9, false, true),
            segment(0x7000, 0x7000, 0x20e8, false, false),
            segment(0xac30, 0x9c30, 0x650, true, false),
        ]);
        let bias = 0x55f6fe999000;
        assert_eq!(cat.load_bias(0x55f6fe999000, 0, false, false), Some(bias));
        assert_eq!(cat.load_bias(0x55f6fe99b000, 0x2000, false, true), Some(bias));
        assert_eq!(cat.load_bias(0x55f6fe9a0000, 0x7000, false, false), Some(bias));
        assert_eq!(cat.load_bias(0x55f6fe9a3000, 0x9000, false, false), Some(bias));
        assert_eq!(cat.load_bias(0x55f6fe9a4000, 0xa000, true, false), Some(bias));
        assert_eq!(cat.load_bias(bias, 0x100000, false, false), None);
    }

    #[test]
    fn bias_when_segments_share_a_file_page() {
        // Old layout: text [0, 0x1e10), data at offset 0x1e10 / vaddr 0x201e10.
        let old = image(vec![
            segment(0, 0, 0x1e10, false, true),
            segment(0x201e10, 0x1e10, 0x300, true, false),
        ]);
        let bias = 0x7f0000000000;
        assert_eq!(old.load_bias(bias + 0x201000, 0x1000, true, false), Some(bias));
        assert_eq!(old.load_bias(bias, 0, false, true), Some(bias));
    }

    #[test]
    fn non_pie_bias_is_zero() {
        let exe = image(vec![
            segment(0x400000, 0, 0x1000, false, true),
            segment(0x4c1000, 0xc0000, 0x2000, true, false),
        ]);
        assert_eq!(exe.load_bias(0x400000, 0, false, true), Some(0));
        assert_eq!(exe.load_bias(0x4c1000, 0xc0000, true, false), Some(0));
    }

    #[test]
    fn classes() {
        assert_eq!(classify(".text", true, false, true, false, false), SectionClass::Text);
        assert_eq!(
            classify(".rodata", true, false, false, false, false),
            SectionClass::ReadOnly
        );
        assert_eq!(classify(".data", true, true, false, false, false), SectionClass::Data);
        assert_eq!(classify(".bss", true, true, false, false, true), SectionClass::Bss);
        assert_eq!(classify(".got.plt", true, true, false, false, false), SectionClass::Got);
        assert_eq!(classify(".tdata", true, true, false, true, false), SectionClass::Data);
        assert_eq!(classify(".tbss", true, true, false, true, true), SectionClass::TlsBss);
        assert_eq!(
            classify(".debug_info", false, false, false, false, false),
            SectionClass::NotAllocated
        );
    }

    #[test]
    fn not_elf() {
        let err = ElfImage::parse(&b"#!/bin/sh\necho hi\n"[..], "/bin/script").unwrap_err();
        assert_eq!(err.to_string(), "/bin/script: not an ELF file");
        let err = ElfImage::parse(&b"\x7fELF\x02\x01\x01"[..], "/cut").unwrap_err();
        assert!(
            matches!(err, SymbolError::NotElf { .. } | SymbolError::Malformed { .. }),
            "{err}"
        );
    }
}
