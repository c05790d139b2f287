//! The objects a process has mapped, each placed with its load bias, and
//! the questions later commands ask of them: which sections does this
//! address range hold, where is symbol S, where is section .bss of object O.
//!
//! Built from one streamed pass over `/proc/PID/maps`. Memory grows with
//! the number of distinct objects, not mappings. Files that cannot be read
//! (deleted without map_files access, not ELF, permission) are listed in
//! `unreadable` with the reason instead of failing the whole process.

use std::collections::HashMap;
use std::ops::Range;
use std::sync::Arc;

use numasleuth_kernel::procfs::maps::{Backing, Mapping, MapsCap, MapsStream};
use numasleuth_kernel::procfs::process::ProcessError;
use numasleuth_kernel::Root;
use serde::Serialize;

use crate::error::SymbolError;
use crate::image::{ElfImage, SectionClass};
use crate::open::ObjectSource;
use crate::placement::{PlacedObject, SectionSpan};
use crate::symbols::Symbol;

#[derive(Debug, Clone, Default)]
pub struct ProcessObjects {
    pub pid: u32,
    pub objects: Vec<PlacedObject>,
    /// Index into `objects` of the program itself.
    pub main: Option<usize>,
    /// Mapped files that could not be used, and why.
    pub unreadable: Vec<SymbolError>,
    /// Mapped files that are not ELF objects (locale archives, data),
    /// which `snapshot -p` notes so a replay skips them the same way.
    pub not_elf: Vec<String>,
    /// Every object's loaded sections, sorted by start address.
    spans: Vec<SectionSpan>,
    /// Each object's address range (mappings and sections), sorted.
    extents: Vec<(Range<u64>, usize)>,
}

/// A symbol at its run-time address.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SymbolLocation {
    pub object: String,
    pub symbol: Symbol,
    /// `None` for thread-local symbols: each thread has its own copy.
    pub runtime: Option<Range<u64>>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SectionLocation {
    pub object: String,
    pub section: String,
    pub class: SectionClass,
    pub runtime: Range<u64>,
}

impl ProcessObjects {
    /// Streams `proc/PID/maps` and places every mapped ELF object.
    pub fn load(root: &Root, pid: u32) -> Result<Self, ProcessError> {
        // Uncapped: the placer keeps objects, not mappings.
        let mut maps = MapsStream::open(root, pid, MapsCap::STREAMED)?;
        let mut placer = ObjectPlacer::new(root, pid);
        while let Some(mapping) = maps.next_mapping()? {
            placer.add(&mapping);
        }
        Ok(placer.finish())
    }

    /// Places the objects of mappings a caller has already read (and keeps
    /// for its own use), so the maps are not read a second time.
    pub fn place(root: &Root, pid: u32, mappings: &[Mapping]) -> Self {
        let mut placer = ObjectPlacer::new(root, pid);
        for mapping in mappings {
            placer.add(mapping);
        }
        placer.finish()
    }

    pub fn main_object(&self) -> Option<&PlacedObject> {
        self.main.map(|i| &self.objects[i])
    }

    /// Objects a user's `--object NAME` selects; every object for `None`,
    /// the program first.
    pub fn select(&self, name: Option<&str>) -> Vec<&PlacedObject> {
        let mut order: Vec<usize> = (0..self.objects.len()).collect();
        if let Some(main) = self.main {
            order.retain(|&i| i != main);
            order.insert(0, main);
        }
        order
            .into_iter()
            .map(|i| &self.objects[i])
            .filter(|o| name.is_none_or(|n| o.is_named(n)))
            .collect()
    }

    /// The object whose address range overlaps `start..end` (its mappings,
    /// or the anonymous tail of its `.bss`).
    pub fn object_at(&self, start: u64, end: u64) -> Option<&PlacedObject> {
        let first = self.extents.partition_point(|(range, _)| range.end <= start);
        self.extents[first..]
            .iter()
            .take_while(|(range, _)| range.start < end)
            .find(|(range, _)| range.end > start)
            .map(|(_, index)| &self.objects[*index])
    }

    /// Loaded sections overlapping `start..end`, in address order.
    pub fn spans_overlapping(&self, start: u64, end: u64) -> impl Iterator<Item = &SectionSpan> {
        let first = self.spans.partition_point(|s| s.end <= start);
        self.spans[first..]
            .iter()
            .take_while(move |s| s.start < end)
            .filter(move |s| s.end > start)
    }

    /// Where symbol `name` is, in the program first and then in each
    /// library (or only in `object`).
    pub fn find_symbol(&self, name: &str, object: Option<&str>) -> Result<Vec<SymbolLocation>, SymbolError> {
        let candidates = self.select(object);
        let mut found = Vec::new();
        for placed in &candidates {
            let Ok((_, table)) = placed.source.image_and_symbols() else {
                continue;
            };
            for symbol in table.find(name) {
                let runtime = (symbol.kind != crate::symbols::SymbolKind::Tls).then(|| {
                    let start = placed.runtime(symbol.address);
                    start..start.saturating_add(symbol.size_bytes.max(1))
                });
                found.push(SymbolLocation {
                    object: placed.path.clone(),
                    symbol: symbol.clone(),
                    runtime,
                });
            }
        }
        if found.is_empty() {
            let tables: Vec<_> = candidates
                .iter()
                .filter_map(|placed| placed.source.image_and_symbols().ok())
                .collect();
            let names = tables
                .iter()
                .flat_map(|(_, table)| table.symbols.iter().map(|s| s.name.as_str()));
            return Err(SymbolError::SymbolNotFound {
                name: name.to_string(),
                searched: self.searched(&candidates, object),
                suggestions: crate::suggest::closest(name, names),
            });
        }
        Ok(found)
    }

    /// Run-time range of `section` in `object`, or in the program when no
    /// object is named.
    pub fn section_ranges(&self, section: &str, object: Option<&str>) -> Result<Vec<SectionLocation>, SymbolError> {
        let candidates = match object {
            Some(_) => self.select(object),
            None => self.main_object().into_iter().collect(),
        };
        let found: Vec<SectionLocation> = candidates
            .iter()
            .filter_map(|placed| {
                let class = placed.image.section(section)?.class;
                Some(SectionLocation {
                    object: placed.path.clone(),
                    section: section.to_string(),
                    class,
                    runtime: placed.section_range(section)?,
                })
            })
            .collect();
        if found.is_empty() {
            return Err(SymbolError::SectionNotFound {
                section: section.to_string(),
                searched: self.searched(&candidates, object),
            });
        }
        Ok(found)
    }

    fn searched(&self, candidates: &[&PlacedObject], object: Option<&str>) -> String {
        match (candidates, object) {
            ([], Some(name)) => format!("process {}: no mapped object is named `{name}`", self.pid),
            ([one], _) => one.path.clone(),
            (many, _) => format!("{} objects mapped by process {}", many.len(), self.pid),
        }
    }
}

/// `proc/PID/exe`'s target: the program's path.
fn read_exe(root: &Root, pid: u32) -> Option<String> {
    let link = root.base().join(format!("proc/{pid}/exe"));
    let target = std::fs::read_link(link).ok()?;
    Some(target.to_string_lossy().into_owned())
}

/// Places objects one mapping at a time, in address order, so a caller
/// streaming `maps` for its own purpose (inspect) can ask what each mapping
/// holds as it goes, without a second pass. Consecutive mappings of one
/// file form one object, placed by its offset-0 mapping.
pub struct ObjectPlacer<'r> {
    root: &'r Root,
    /// Under a snapshot: the objects `snapshot -p` captured, path to
    /// build-id (see `captured`).
    captured: HashMap<String, String>,
    /// Parsed headers by (device, inode), so a file mapped many times is
    /// read once; errors are remembered too.
    images: HashMap<(u32, u32, u64), Result<Arc<ElfImage>, SymbolError>>,
    current: Option<(Mapping, usize)>,
    placed: ProcessObjects,
}

impl<'r> ObjectPlacer<'r> {
    pub fn new(root: &'r Root, pid: u32) -> Self {
        // A list that cannot be read leaves the objects unread, which the
        // report says per object.
        let captured = if root.is_live() {
            HashMap::new()
        } else {
            crate::captured::load(root, pid).unwrap_or_default()
        };
        ObjectPlacer {
            root,
            captured,
            images: HashMap::new(),
            current: None,
            placed: ProcessObjects {
                pid,
                ..ProcessObjects::default()
            },
        }
    }

    /// What has been placed so far; complete after the last mapping.
    pub fn objects(&self) -> &ProcessObjects {
        &self.placed
    }

    pub fn add(&mut self, mapping: &Mapping) {
        let Backing::File { path, .. } = &mapping.backing else {
            return;
        };
        if let Some((first, index)) = &self.current {
            let same_file = first.backing == mapping.backing && first.inode == mapping.inode;
            if same_file && mapping.offset_bytes >= first.offset_bytes {
                let index = *index;
                let object = &mut self.placed.objects[index];
                object.mapped.end = object.mapped.end.max(mapping.end);
                let end = object.mapped.end;
                if let Some((range, _)) = self.placed.extents.iter_mut().find(|(_, i)| *i == index) {
                    range.end = range.end.max(end);
                }
                return;
            }
        }
        self.current = None;
        // An object's first mapping is private and maps offset 0; device
        // files, shared memory and memfds are never program images.
        if mapping.offset_bytes != 0 || mapping.perms.shared || path.starts_with("/dev/") || path.starts_with("/memfd:")
        {
            return;
        }
        let Some(source) = ObjectSource::mapping(self.root, self.placed.pid, mapping, &self.captured) else {
            return;
        };
        let key = (mapping.dev_major, mapping.dev_minor, mapping.inode);
        let image = self
            .images
            .entry(key)
            .or_insert_with(|| source.image().map(Arc::new))
            .clone();
        let image = match image {
            Ok(image) => image,
            Err(SymbolError::NotElf { .. }) => {
                if !self.placed.not_elf.contains(path) && self.placed.not_elf.len() < crate::captured::MAX_OBJECTS {
                    self.placed.not_elf.push(path.clone());
                }
                return;
            }
            Err(error) => {
                if !self.placed.unreadable.contains(&error) {
                    self.placed.unreadable.push(error);
                }
                return;
            }
        };
        let Some(bias) = image.load_bias(mapping.start, 0, mapping.perms.write, mapping.perms.exec) else {
            return;
        };
        let object = PlacedObject {
            path: source.shown.clone(),
            source,
            image,
            bias,
            mapped: mapping.start..mapping.end,
        };
        let index = self.placed.objects.len();
        let placed = &mut self.placed;
        let ordered = placed
            .spans
            .last()
            .is_none_or(|last| object.spans().first().is_none_or(|s| s.start >= last.start));
        placed.spans.extend(object.spans());
        placed.extents.push((object.extent(), index));
        if !ordered {
            placed.spans.sort_by_key(|s| (s.start, s.end));
            placed.extents.sort_by_key(|(range, _)| (range.start, range.end));
        }
        placed.objects.push(object);
        self.current = Some((mapping.clone(), index));
    }

    /// Names the program: `proc/PID/exe`, else the object with an
    /// interpreter, else the ET_EXEC one, else the first.
    pub fn finish(self) -> ProcessObjects {
        let mut placed = self.placed;
        let exe = read_exe(self.root, placed.pid);
        let objects = &placed.objects;
        placed.main = exe
            .and_then(|exe| objects.iter().position(|o| o.path == exe))
            .or_else(|| objects.iter().position(|o| o.image.has_interp))
            .or_else(|| {
                objects
                    .iter()
                    .position(|o| o.image.elf_type == crate::image::ElfType::Executable)
            })
            .or(if objects.is_empty() { None } else { Some(0) });
        placed
    }
}
