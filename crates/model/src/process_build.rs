//! Building a [`ProcessModel`] from a stream of mappings, in bounded memory.
//!
//! Each mapping is folded into totals as it arrives. Mappings that hold a
//! writable static section (`.data`, `.bss`, `.got`) are kept, because one
//! such mapping usually holds several sections and only a per-page query
//! can split it: the caller asks [`ProcessBuilder::pages_to_query`],
//! queries move_pages (a side effect this crate does not perform), and
//! hands the answers back with [`ProcessBuilder::set_page_nodes`]. Without
//! answers (a snapshot, no permission) the whole mapping's numa_maps count
//! goes to the section covering most of it, marked per-VMA.

use std::collections::BTreeMap;

use crate::symbol::SectionSpan;
use numasleuth_parse::pages::Residency;
use numasleuth_parse::procfs::process::{ThreadReading, Vma};
use numasleuth_parse::procfs::task::TaskStat;

use crate::process::{
    base_kind, is_special, Accuracy, MappingUsage, MemoryKind, NodeCounts, ObjectUsage, PolicyUsage, ProcessModel,
    ThreadPlacement,
};
use crate::Topology;

#[path = "process_largest.rs"]
mod largest;
#[path = "process_runs.rs"]
mod runs;
#[path = "process_split.rs"]
mod split;

use largest::Largest;

/// Largest number of static pages asked per page; beyond it counts stay
/// per mapping (a 256 MiB `.bss` is not "small static data").
pub const STATIC_QUERY_LIMIT_PAGES: u64 = 65_536;

/// Threads placed by their allowed CPUs named in the notes, at most.
const MOVED_THREADS_NOTED: usize = 8;

struct StaticVma {
    usage: MappingUsage,
    pieces: Vec<SectionSpan>,
    query: std::ops::Range<u64>,
    page_nodes: Option<Vec<Residency>>,
}

pub struct ProcessBuilder {
    base_page_bytes: u64,
    listing_limit: usize,
    listed: Vec<MappingUsage>,
    /// Mappings in no section, neither heap nor stack, with pages.
    others: Largest,
    /// Mappings with nothing resident, not listed.
    omitted: u64,
    statics: Vec<StaticVma>,
    static_query_pages: u64,
    bytes_by_node: NodeCounts,
    bytes_by_kind: BTreeMap<MemoryKind, NodeCounts>,
    objects: BTreeMap<String, ObjectUsage>,
    policies: BTreeMap<String, PolicyUsage>,
    /// Runs of like mappings not yet folded into the four maps above.
    runs: runs::Runs,
    hidden_pages_note: Vec<String>,
    /// Some static mapping fell back to numa_maps' per-mapping count.
    split_per_vma: bool,
    vmas: u64,
}

impl ProcessBuilder {
    /// `listing_limit`: how many mappings beyond static sections, heap and
    /// stack to list individually (the largest first).
    pub fn new(base_page_bytes: u64, listing_limit: usize) -> Self {
        ProcessBuilder {
            base_page_bytes: base_page_bytes.max(1),
            listing_limit,
            listed: Vec::new(),
            others: Largest::new(listing_limit),
            omitted: 0,
            statics: Vec::new(),
            static_query_pages: 0,
            bytes_by_node: NodeCounts::new(),
            bytes_by_kind: BTreeMap::new(),
            objects: BTreeMap::new(),
            policies: BTreeMap::new(),
            runs: runs::Runs::default(),
            hidden_pages_note: Vec::new(),
            split_per_vma: false,
            vmas: 0,
        }
    }

    /// Folds in one mapping. `object` is the ELF object whose address range
    /// holds it, `spans` the loaded sections that overlap it.
    pub fn add(&mut self, vma: &Vma, object: Option<&str>, spans: &[&SectionSpan]) {
        self.vmas += 1;
        let m = &vma.mapping;
        let numa = vma.numa.as_ref();
        let pages = node_pages(numa.map_or(&[], |n| &n.pages_by_node));
        let page_size_bytes = numa.map_or(self.base_page_bytes, |n| n.page_size_bytes());
        let policy = numa.and_then(|n| n.policy.as_ref());
        let (runs, mut totals) = self.runs_and_totals();
        if let Some(policy) = policy {
            runs.add_to_policy(policy, (&pages, page_size_bytes), &mut totals);
        }
        runs.add_to_nodes(&pages, page_size_bytes, &mut totals);
        let dominant = spans
            .iter()
            .max_by_key(|s| s.end.min(m.end).saturating_sub(s.start.max(m.start)))
            .copied();
        let kind = kind_of(vma, object, dominant);
        let object = object.or_else(|| m.backing.path());
        let usage = || MappingUsage {
            start: m.start,
            end: m.end,
            kind,
            object: object.map(str::to_string),
            section: dominant.map(|s| s.section.clone()),
            perms: m.perms,
            policy: policy.cloned(),
            pages_by_node: pages.iter().copied().collect(),
            counted_pages_by_node: pages.iter().copied().collect(),
            hinting_fault_pages: 0,
            page_size_bytes,
            accuracy: Accuracy::PerVma,
        };
        if spans.iter().any(|s| s.class.is_writable_static()) {
            let writable = spans
                .iter()
                .filter(|s| s.class.is_writable_static())
                .map(|s| clip(s, m.start, m.end))
                .collect();
            // The whole mapping: static mappings are small, and a full
            // answer can be checked against numa_maps' count.
            self.statics.push(StaticVma {
                usage: usage(),
                pieces: writable,
                query: m.start..m.end,
                page_nodes: None,
            });
            return;
        }
        if sum_pages(&pages) > 0 {
            let (runs, mut totals) = self.runs_and_totals();
            runs.add_to_kind((kind, object), (&pages, page_size_bytes), &mut totals);
        }
        // Sections, heap and stack always; others while resident, the
        // largest up to the listing limit; the rest only counted.
        let resident_pages = sum_pages(&pages);
        if dominant.is_some() || matches!(kind, MemoryKind::Heap | MemoryKind::Stack) {
            self.listed.push(usage());
        } else if resident_pages > 0 || self.listing_limit == usize::MAX {
            self.others.offer(resident_pages.saturating_mul(page_size_bytes), usage);
        } else {
            self.omitted += 1;
        }
    }

    /// The runs not yet folded in, and the maps they fold into.
    fn runs_and_totals(&mut self) -> (&mut runs::Runs, runs::Totals<'_>) {
        let totals = runs::Totals {
            bytes_by_node: &mut self.bytes_by_node,
            bytes_by_kind: &mut self.bytes_by_kind,
            objects: &mut self.objects,
            policies: &mut self.policies,
        };
        (&mut self.runs, totals)
    }

    /// Page-aligned ranges whose pages should be asked for their node,
    /// largest total first capped at `STATIC_QUERY_LIMIT_PAGES`.
    pub fn pages_to_query(&mut self) -> Vec<std::ops::Range<u64>> {
        let mut out = Vec::new();
        for s in &self.statics {
            let pages = (s.query.end - s.query.start) / self.base_page_bytes;
            if s.usage.resident_pages() == 0 || self.static_query_pages + pages > STATIC_QUERY_LIMIT_PAGES {
                continue;
            }
            self.static_query_pages += pages;
            out.push(s.query.clone());
        }
        out
    }

    /// The answer for a range from [`Self::pages_to_query`], one per base
    /// page: move_pages' status read with pagemap
    /// ([`numasleuth_parse::pages::residency`]).
    pub fn set_page_nodes(&mut self, range_start: u64, statuses: Vec<Residency>) {
        if let Some(s) = self.statics.iter_mut().find(|s| s.query.start == range_start) {
            if statuses.len() as u64 == (s.query.end - s.query.start) / self.base_page_bytes {
                s.page_nodes = Some(statuses);
            }
        }
    }

    /// Adds a listed range's counted pages to the totals by kind and object.
    fn fold(&mut self, usage: &MappingUsage, kind: MemoryKind, pages: &NodeCounts) {
        let pages: Vec<(u32, u64)> = pages.iter().map(|(node, count)| (*node, *count)).collect();
        self.fold_pages(usage.object.as_deref(), kind, &pages, usage.page_size_bytes);
    }

    fn fold_pages(&mut self, object: Option<&str>, kind: MemoryKind, pages: &[(u32, u64)], page_size_bytes: u64) {
        if sum_pages(pages) == 0 {
            return;
        }
        add_pages(self.bytes_by_kind.entry(kind).or_default(), pages, page_size_bytes);
        if let Some(object) = object {
            if !self.objects.contains_key(object) {
                let usage = ObjectUsage {
                    object: object.to_string(),
                    ..ObjectUsage::default()
                };
                self.objects.insert(object.to_string(), usage);
            }
            if let Some(entry) = self.objects.get_mut(object) {
                add_pages(entry.bytes_by_kind.entry(kind).or_default(), pages, page_size_bytes);
            }
        }
    }

    /// Splits the kept static mappings into sections and assembles the model.
    pub fn finish(
        mut self,
        stat: &TaskStat,
        program: Option<String>,
        threads: &[ThreadReading],
        topology: &Topology,
        mut notes: Vec<String>,
    ) -> ProcessModel {
        let (runs, mut totals) = self.runs_and_totals();
        runs.fold_all(&mut totals);
        let statics = std::mem::take(&mut self.statics);
        let mut per_page_static = !statics.is_empty()
            && statics
                .iter()
                .all(|s| s.page_nodes.is_some() || s.usage.resident_pages() == 0);
        if statics
            .iter()
            .any(|s| s.page_nodes.is_none() && s.usage.resident_pages() > 0)
        {
            notes.push(
                "some static sections could not be split per page (no move_pages answer): their mapping's numa_maps count is shown under the section covering most of it"
                    .into(),
            );
        }
        for s in statics {
            self.split(s);
        }
        per_page_static &= !self.split_per_vma;
        notes.append(&mut self.hidden_pages_note);
        let (others, turned_away) = self.others.finish();
        let mut mappings = self.listed;
        mappings.extend(others);
        mappings.sort_by_key(|u| (u.start, u.end));
        let threads: Vec<ThreadPlacement> = threads
            .iter()
            .map(|t| ThreadPlacement::from_reading(t, topology))
            .collect();
        // A thread that slept through an affinity change still shows its
        // old CPU: say which threads were placed by their allowed CPUs.
        let moved: Vec<String> = threads.iter().filter_map(ThreadPlacement::moved_away).collect();
        for line in moved.iter().take(MOVED_THREADS_NOTED) {
            notes.push(format!(
                "{line}: placed by the CPUs it may use (it has not run since its affinity changed)"
            ));
        }
        if moved.len() > MOVED_THREADS_NOTED {
            notes.push(format!(
                "… and {} more thread(s) placed by the CPUs they may use",
                moved.len() - MOVED_THREADS_NOTED
            ));
        }
        ProcessModel {
            pid: stat.tid,
            comm: stat.comm.clone(),
            state: stat.state,
            kernel_thread: stat.is_kernel_thread(),
            program,
            thread_nodes: crate::process::thread_nodes(&threads),
            threads,
            mappings,
            mappings_total: self.vmas,
            mappings_omitted: self.omitted + turned_away,
            bytes_by_node: self.bytes_by_node,
            bytes_by_kind: self.bytes_by_kind,
            objects: self.objects.into_values().collect(),
            policies: self.policies.into_values().collect(),
            per_page_static,
            notes,
        }
    }
}

/// numa_maps' per-node counts, one per node. The kernel writes each node
/// once, in ascending order; a line that repeats a node (a corrupt file)
/// keeps its last count, as a map built from it would.
fn node_pages(pages: &[(u32, u64)]) -> std::borrow::Cow<'_, [(u32, u64)]> {
    if pages.windows(2).all(|w| w[0].0 < w[1].0) {
        return std::borrow::Cow::Borrowed(pages);
    }
    let unique: NodeCounts = pages.iter().copied().collect();
    std::borrow::Cow::Owned(unique.into_iter().collect())
}

/// Saturates: a corrupt line's counts must not overflow the sums.
fn sum_pages(pages: &[(u32, u64)]) -> u64 {
    pages.iter().fold(0u64, |sum, (_, count)| sum.saturating_add(*count))
}

fn add_pages(into: &mut NodeCounts, pages: &[(u32, u64)], page_size_bytes: u64) {
    for (node, count) in pages {
        let bytes = into.entry(*node).or_default();
        *bytes = bytes.saturating_add(count.saturating_mul(page_size_bytes));
    }
}

fn clip(span: &SectionSpan, start: u64, end: u64) -> SectionSpan {
    SectionSpan {
        start: span.start.max(start),
        end: span.end.min(end),
        ..span.clone()
    }
}

/// What a mapping holds: the section covering most of it, else (for an
/// object's mapping no section covers: stripped headers, or the gap between
/// segments) its permissions, else what backs it.
fn kind_of(vma: &Vma, object: Option<&str>, dominant: Option<&SectionSpan>) -> MemoryKind {
    let m = &vma.mapping;
    match dominant {
        Some(span) => MemoryKind::from_class(span.class),
        None if object.is_some() && !is_special(&m.backing) => match (m.perms.exec, m.perms.write) {
            (true, _) => MemoryKind::Text,
            (false, true) => MemoryKind::Data,
            _ => MemoryKind::Rodata,
        },
        None => base_kind(vma),
    }
}
