//! An object placed in a process: its headers plus the load bias, which
//! turns every link-time address into a run-time one.
//!
//! For a non-PIE executable the bias is 0; for a PIE or shared object it is
//! where the loader put it. Section spans computed here cover memory that
//! `maps` shows in several pieces: the file-backed part of the RW segment,
//! its RELRO part made read-only after relocation, and the anonymous
//! mapping after it that holds the rest of `.bss`.

use std::ops::Range;
use std::sync::Arc;

use crate::image::{ElfImage, SectionClass};
use crate::open::ObjectSource;
pub use numasleuth_model::symbol::SectionSpan;

#[derive(Debug, Clone)]
pub struct PlacedObject {
    /// The path as the process maps it.
    pub path: String,
    pub source: ObjectSource,
    pub image: Arc<ElfImage>,
    /// Run-time minus link-time address.
    pub bias: u64,
    /// The lowest and highest addresses of its file mappings.
    pub mapped: Range<u64>,
}

impl PlacedObject {
    pub fn runtime(&self, link_address: u64) -> u64 {
        link_address.wrapping_add(self.bias)
    }

    /// Run-time range of a section, if it is loaded.
    pub fn section_range(&self, name: &str) -> Option<Range<u64>> {
        let section = self.image.section(name)?;
        (section.alloc && section.class != SectionClass::TlsBss).then(|| {
            let start = self.runtime(section.address);
            start..start.saturating_add(section.size_bytes)
        })
    }

    /// Every loaded section with bytes in memory, in address order.
    pub fn spans(&self) -> Vec<SectionSpan> {
        let mut spans: Vec<SectionSpan> = self
            .image
            .sections
            .iter()
            .filter(|s| s.alloc && s.size_bytes > 0 && s.class != SectionClass::TlsBss)
            .map(|s| {
                let start = self.runtime(s.address);
                SectionSpan {
                    object: self.path.clone(),
                    section: s.name.clone(),
                    class: s.class,
                    start,
                    end: start.saturating_add(s.size_bytes),
                }
            })
            .collect();
        spans.sort_by_key(|s| (s.start, s.end));
        spans
    }

    /// The addresses this object occupies: its mappings and its sections
    /// (`.bss` may run past the last file mapping).
    pub fn extent(&self) -> Range<u64> {
        let spans = self.spans();
        let start = spans
            .iter()
            .map(|s| s.start)
            .chain([self.mapped.start])
            .min()
            .unwrap_or(0);
        let end = spans.iter().map(|s| s.end).chain([self.mapped.end]).max().unwrap_or(0);
        start..end
    }

    pub fn spans_overlapping(&self, start: u64, end: u64) -> Vec<SectionSpan> {
        self.spans()
            .into_iter()
            .filter(|s| s.start < end && s.end > start)
            .collect()
    }

    /// Whether a user's `--object` names this object: the full path or the
    /// file name (`libc.so.6`).
    pub fn is_named(&self, name: &str) -> bool {
        let bare = self.path.trim_end_matches(" (deleted)");
        bare == name || bare.rsplit('/').next() == Some(name)
    }
}
