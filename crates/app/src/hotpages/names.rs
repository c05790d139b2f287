//! Naming a DAMON region for `hotpages` ([`super::observe`]): the ELF
//! object and section covering most of it with the data symbols in it (as
//! `bisect` names a page), or the mapping it lies in: heap, the stack of a
//! thread, anonymous memory, a file.
//!
//! Read once, after monitoring: the mappings (capped; the objects are
//! placed from the same read), the objects' sections and symbols, and the
//! stack pointers of threads that are blocked (a running thread has none
//! to read).

use std::collections::BTreeMap;

use numasleuth_analyze::lines::{data_symbols, LineSymbol};
use numasleuth_kernel::procfs::maps::{Backing, Mapping};
use numasleuth_kernel::procfs::syscall::read_stack_pointer;
use numasleuth_kernel::Root;
use numasleuth_model::hotpages::RegionName;
use numasleuth_model::mapping_kind::MappingKind;
use numasleuth_model::process::MemoryKind;
use numasleuth_symbols::{MappedObjects, ProcessObjects};

/// Threads whose stack pointer is read.
const MAX_THREADS: usize = 4096;
/// Symbols named per region; the count says how many more.
const SYMBOLS_LISTED: usize = 16;

pub struct Namer {
    mappings: Vec<Mapping>,
    objects: Option<ProcessObjects>,
    /// Per object path: its data symbols at run-time addresses, sorted.
    symbols: BTreeMap<String, Vec<LineSymbol>>,
    /// Blocked threads' stack pointers.
    stack_pointers: BTreeMap<u32, u64>,
    pub notes: Vec<String>,
}

impl Namer {
    pub fn load(root: &Root, pid: u32, tids: &[u32]) -> Self {
        // One read names regions by mapping and places the objects.
        let mapped = MappedObjects::read(root, pid);
        let mut notes = mapped.notes("regions past them are not named", "regions not named by mapping");
        let MappedObjects { mappings, objects, .. } = mapped;
        let mut symbols = BTreeMap::new();
        let objects = match objects {
            Ok(objects) => {
                for object in &objects.objects {
                    if let Ok((_, table)) = object.source.image_and_symbols() {
                        let list: Vec<LineSymbol> = data_symbols(&table.symbols, object.bias)
                            .into_iter()
                            .filter(|s| !s.tls)
                            .collect();
                        symbols.insert(object.path.clone(), list);
                    }
                }
                Some(objects)
            }
            Err(e) => {
                notes.push(format!("regions not named by ELF section or symbol: {e}"));
                None
            }
        };
        let stack_pointers = tids
            .iter()
            .take(MAX_THREADS)
            .filter_map(|&tid| Some((tid, read_stack_pointer(root, pid, tid).ok()??)))
            .collect();
        Namer {
            mappings,
            objects,
            symbols,
            stack_pointers,
            notes,
        }
    }

    /// Whether `address` lies in a mapping (DAMON's regions can span the
    /// small gaps between mappings).
    pub fn is_mapped(&self, address: u64) -> bool {
        let i = self.mappings.partition_point(|m| m.end <= address);
        self.mappings.get(i).is_some_and(|m| m.start <= address)
    }

    /// The mapping covering the most of `start..end`.
    fn main_mapping(&self, start: u64, end: u64) -> Option<&Mapping> {
        let first = self.mappings.partition_point(|m| m.end <= start);
        self.mappings[first..]
            .iter()
            .take_while(|m| m.start < end)
            .max_by_key(|m| m.end.min(end) - m.start.max(start))
    }

    pub fn name(&self, start: u64, end: u64) -> RegionName {
        let mut name = RegionName::default();
        let mapping = self.main_mapping(start, end);
        // Without its numa_maps line: anonymous memory holding a thread's
        // stack pointer is that thread's stack.
        name.kind = mapping.map(|m| m.kind_given_stack(self.stack_owner(m).is_some()));
        name.stack_of_tid = mapping.and_then(|m| self.stack_owner(m));
        if let Some(Backing::File { path, .. }) = mapping.map(|m| &m.backing) {
            name.object = Some(path.clone());
        }
        let Some(objects) = &self.objects else {
            return name;
        };
        let span = objects
            .spans_overlapping(start, end)
            .max_by_key(|s| s.end.min(end) - s.start.max(start));
        if let Some(span) = span {
            name.kind = Some(MemoryKind::from_class(span.class));
            name.object = Some(span.object.clone());
            name.section = Some(span.section.clone());
            name.stack_of_tid = None;
        }
        if let Some(object) = objects.object_at(start, end) {
            name.object.get_or_insert_with(|| object.path.clone());
            let list = self.symbols.get(&object.path).map_or(&[][..], Vec::as_slice);
            let first = list.partition_point(|s| s.address.saturating_add(s.size) <= start);
            let mut inside: Vec<&LineSymbol> = list[first..].iter().take_while(|s| s.address < end).collect();
            // The names a person wrote first: function-local statics the
            // compiler renamed (`completed.1`, `object.0`, crtstuff's) last,
            // so the next steps name the program's own globals.
            inside.sort_by_key(|s| compiler_local(&s.name));
            name.symbols = inside.iter().take(SYMBOLS_LISTED).map(|s| s.name.clone()).collect();
            name.symbols_not_shown = inside.len().saturating_sub(SYMBOLS_LISTED) as u64;
        }
        name
    }

    /// The thread whose stack pointer lies in `m`.
    fn stack_owner(&self, m: &Mapping) -> Option<u32> {
        self.stack_pointers
            .iter()
            .find(|(_, sp)| m.start <= **sp && **sp < m.end)
            .map(|(tid, _)| *tid)
    }
}

/// A name GCC gave a function-local static: `name.N`.
fn compiler_local(name: &str) -> bool {
    name.rsplit_once('.')
        .is_some_and(|(base, n)| !base.is_empty() && !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
}

#[cfg(test)]
mod tests {
    #[test]
    fn compiler_made_names_are_told_apart() {
        assert!(super::compiler_local("completed.1"));
        assert!(super::compiler_local("object.0"));
        assert!(!super::compiler_local("nil_root"));
        assert!(!super::compiler_local("__x86_shared_cache_size"));
        assert!(!super::compiler_local(".5"));
        assert!(!super::compiler_local("v1.x"));
    }
}
