//! Source file, line and (inlined) function of a code address, from DWARF.
//!
//! `watch` samples instruction addresses; a function name says which code
//! writes, a file:line says which statement. The DWARF sections are read
//! from the object itself or, for a stripped system binary, from its
//! separate debug file under `/usr/lib/debug/.build-id/` (Debian's
//! `-dbgsym` packages), copied into memory for one object at a time and
//! dropped after its addresses are looked up. Compressed debug sections are
//! not supported (the `object` build here has no decompressor): that is a
//! note, not an error.

use std::borrow::Cow;
use std::path::PathBuf;

use addr2line::gimli::{self, EndianSlice, RunTimeEndian, SectionId};
use object::read::ReadCache;
use object::{Object, ObjectSection};
use thiserror::Error;

use numasleuth_kernel::error::escape;
use numasleuth_kernel::untrusted::format_cap;

use crate::demangle::demangle;
use crate::error::SymbolError;
use crate::limits::{self, MAX_DWARF_BYTES};
use crate::open::ObjectSource;

/// What the debug info says about one link-time address.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SourceLine {
    /// The innermost function: the inlined one when the code was inlined.
    pub function: Option<String>,
    /// The function the innermost one was inlined into, if any.
    pub inlined_into: Option<String>,
    pub path: Option<String>,
    pub line: Option<u32>,
}

/// Why an object's debug info could not be used. `shown` is the object's
/// path, escaped; the inner error's text is part of the message, so it is
/// a field, not a `#[source]` (`{:#}` would print it twice).
#[derive(Debug, Error)]
pub enum DebugInfoError {
    #[error(transparent)]
    Open(#[from] SymbolError),
    #[error("{shown}: {error}")]
    Parse { shown: String, error: object::Error },
    #[error(
        "{shown}: {bytes} bytes of debug info, more than the {} numasleuth loads",
        format_cap(MAX_DWARF_BYTES)
    )]
    TooLarge { shown: String, bytes: u64 },
    #[error("{shown}: {section}: {error}")]
    Section {
        shown: String,
        section: &'static str,
        error: object::Error,
    },
    /// `from` is [`DebugInfo::from`], as shown.
    #[error("{from}: DWARF: {error}")]
    Dwarf { from: String, error: gimli::Error },
}

/// The DWARF sections of one object, owned.
pub struct DebugInfo {
    sections: gimli::DwarfSections<Vec<u8>>,
    endian: RunTimeEndian,
    /// Where the sections came from (the object or its debug file).
    pub from: String,
}

fn load_from(path: &std::path::Path, shown: &str) -> Result<Option<DebugInfo>, DebugInfoError> {
    let file = limits::open_elf(path, shown)?;
    let cache = ReadCache::new(file);
    let object = object::File::parse(&cache).map_err(|error| DebugInfoError::Parse {
        shown: escape(shown),
        error,
    })?;
    if object.section_by_name(".debug_info").is_none() {
        return Ok(None);
    }
    // Sections are copied into memory whole; refuse before copying any.
    let dwarf_bytes: u64 = object
        .sections()
        .filter(|s| {
            s.name()
                .is_ok_and(|n| n.starts_with(".debug_") || n.starts_with(".zdebug_"))
        })
        .map(|s| s.size())
        .fold(0, u64::saturating_add);
    if dwarf_bytes > MAX_DWARF_BYTES {
        return Err(DebugInfoError::TooLarge {
            shown: escape(shown),
            bytes: dwarf_bytes,
        });
    }
    let endian = if object.is_little_endian() {
        RunTimeEndian::Little
    } else {
        RunTimeEndian::Big
    };
    let sections = gimli::DwarfSections::load(|id: SectionId| -> Result<Vec<u8>, DebugInfoError> {
        match object.section_by_name(id.name()) {
            Some(section) => {
                section
                    .uncompressed_data()
                    .map(Cow::into_owned)
                    .map_err(|error| DebugInfoError::Section {
                        shown: escape(shown),
                        section: id.name(),
                        error,
                    })
            }
            None => Ok(Vec::new()),
        }
    })?;
    Ok(Some(DebugInfo {
        sections,
        endian,
        from: shown.to_string(),
    }))
}

/// The separate debug file named by the object's GNU build-id, if any.
fn build_id_path(source: &ObjectSource) -> Option<PathBuf> {
    let file = source.open().ok()?;
    let cache = ReadCache::new(file);
    let object = object::File::parse(&cache).ok()?;
    let id = object.build_id().ok()??;
    let hex: String = id.iter().map(|b| format!("{b:02x}")).collect();
    if hex.len() < 3 {
        return None;
    }
    let path = PathBuf::from(format!("/usr/lib/debug/.build-id/{}/{}.debug", &hex[..2], &hex[2..]));
    path.is_file().then_some(path)
}

impl DebugInfo {
    /// The object's DWARF, else its build-id debug file's; `Ok(None)` when
    /// neither has any.
    pub fn load(source: &ObjectSource) -> Result<Option<DebugInfo>, DebugInfoError> {
        let Some(first) = source.candidates.iter().find(|c| c.is_file()) else {
            return Ok(None);
        };
        if let Some(info) = load_from(first, &source.shown)? {
            return Ok(Some(info));
        }
        match build_id_path(source) {
            Some(path) => load_from(&path, &path.display().to_string()),
            None => Ok(None),
        }
    }

    /// Looks up every link-time address at once (building the line tables
    /// is the expensive part). Errors in one unit leave its answers empty.
    pub fn lookup(&self, addresses: &[u64]) -> Result<Vec<SourceLine>, DebugInfoError> {
        let dwarf = self.sections.borrow(|s| EndianSlice::new(s.as_slice(), self.endian));
        let context = addr2line::Context::from_dwarf(dwarf).map_err(|error| DebugInfoError::Dwarf {
            from: self.from.clone(),
            error,
        })?;
        Ok(addresses.iter().map(|&a| line_of(&context, a)).collect())
    }
}

fn line_of<R: gimli::Reader>(context: &addr2line::Context<R>, address: u64) -> SourceLine {
    let mut out = SourceLine::default();
    // addr2line probes the range [address, address + 1), which overflows
    // at the last address (a hostile symbol's value). No instruction can
    // start there, so it has no line.
    if address == u64::MAX {
        return out;
    }
    if let Ok(mut frames) = context.find_frames(address).skip_all_loads() {
        let mut names = Vec::new();
        let mut first = true;
        while let Ok(Some(frame)) = frames.next() {
            if first {
                if let Some(location) = &frame.location {
                    out.path = location.file.map(str::to_string);
                    out.line = location.line;
                }
                first = false;
            }
            if let Some(name) = frame.function.as_ref().and_then(|f| f.raw_name().ok()) {
                names.push(demangle(&name));
            }
        }
        out.function = names.first().cloned();
        out.inlined_into = names.last().filter(|_| names.len() > 1).cloned();
    }
    if out.path.is_none() {
        if let Ok(Some(location)) = context.find_location(address) {
            out.path = location.file.map(str::to_string);
            out.line = location.line;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// fuzz/regressions/elf_symbols/symbol-at-the-last-address: a symbol
    /// at u64::MAX made addr2line overflow. This test binary has line
    /// tables, so its DWARF is real.
    #[test]
    fn the_last_address_has_no_line() {
        let exe = std::env::current_exe().expect("the test binary");
        let info = DebugInfo::load(&ObjectSource::file(&exe.display().to_string()))
            .expect("readable DWARF")
            .expect("the test binary has line tables");
        let found = info.lookup(&[u64::MAX]).expect("a lookup");
        assert_eq!(found.len(), 1);
        assert!(found[0].path.is_none() && found[0].function.is_none());
    }
}
