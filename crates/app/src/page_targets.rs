//! The pages a user names for `move` and `bisect`: a range, a symbol or
//! a section of a live process, clipped to what it maps, with where each
//! page is now. [`set_up`] is the one set-up both commands run, so they
//! cannot disagree on which pages were asked for.

use std::ops::Range;

use numasleuth_analyze::page_move::{self, Target, VmaPages};
use numasleuth_kernel::pages::{self, PagesError, Residency};
use numasleuth_kernel::procfs::pagemap;
use numasleuth_kernel::procfs::process::{for_each_vma, read_process_stat, ProcessError};
use numasleuth_kernel::Root;
use numasleuth_report::format;
use numasleuth_symbols::{ProcessObjects, SymbolError};

/// Why the pages asked for could not be set up, in the words `move` and
/// `bisect` print.
#[derive(Debug, thiserror::Error)]
pub enum PageSetError {
    #[error(transparent)]
    Process(#[from] ProcessError),
    #[error(transparent)]
    Symbol(#[from] SymbolError),
    #[error("process {pid} is a kernel thread: it has no user memory to {verb}")]
    KernelThread { pid: u32, verb: String },
    #[error("/proc/{pid}/stat has no start time: cannot tie a journal to this process")]
    NoStartTime { pid: u32 },
    #[error("process {pid} maps nothing in the pages asked for (see /proc/{pid}/maps)")]
    NothingMapped { pid: u32 },
    #[error("symbol `{name}` is thread-local: each thread's copy lives in its own TLS block; move it with --range")]
    ThreadLocal { name: String },
    #[error(
        "the pages asked for cover {pages} page(s) ({}) that process {pid} maps; one move considers at most {} \
         pages ({} of {} pages): narrow --range or move a --section or --symbol",
        format::bytes(*mapped_bytes),
        page_move::MAX_PAGES,
        format::bytes(page_move::MAX_PAGES.saturating_mul(*page_bytes)),
        format::bytes(*page_bytes)
    )]
    TooManyPages {
        pid: u32,
        pages: u64,
        mapped_bytes: u64,
        page_bytes: u64,
    },
    #[error(
        "the pages asked for span {mappings} mappings of process {pid}; one move lists at most {MAX_MAPPINGS}: \
         narrow --range"
    )]
    TooManyMappings { pid: u32, mappings: u64 },
    #[error("where the pages are now")]
    Query {
        #[source]
        error: PagesError,
    },
}

/// What to move, as typed: one of range, symbol, section (default .bss).
#[derive(Debug, Clone, Default)]
pub struct Asked {
    pub pid: u32,
    pub range: Option<(u64, u64)>,
    pub symbol: Option<String>,
    pub section: Option<String>,
    /// The ELF object whose symbol or section is meant (default: the
    /// program itself).
    pub object: Option<String>,
}

/// The asked pages of a live process, with where each is now.
pub struct PageSet {
    pub comm: String,
    /// The process's start time, which ties a journal to it (a reused PID
    /// is not the same process).
    pub start_time: u64,
    /// The ranges asked for, each described for the plan.
    pub targets: Vec<Target>,
    pub ranges: Vec<Range<u64>>,
    pub page_bytes: u64,
    /// What the process maps inside the ranges.
    pub mapped: Mapped,
    /// Every page asked for that the process maps, in order.
    pub addresses: Vec<u64>,
    /// Where each page of `addresses` is now.
    pub states: Vec<Residency>,
}

/// Reads the process, resolves what was asked to run-time ranges, clips
/// them to its mappings and asks where each page is; `verb` ("move",
/// "bisect") names what a kernel thread cannot have done to it. `notes`
/// gains what the page query could not tell.
pub fn set_up(root: &Root, asked: &Asked, verb: &str, notes: &mut Vec<String>) -> Result<PageSet, PageSetError> {
    let pid = asked.pid;
    let stat = read_process_stat(root, pid)?;
    if stat.is_kernel_thread() {
        return Err(PageSetError::KernelThread {
            pid,
            verb: verb.to_string(),
        });
    }
    let Some(start_time) = stat.start_time_ticks else {
        return Err(PageSetError::NoStartTime { pid });
    };
    let (targets, ranges): (Vec<Target>, Vec<Range<u64>>) = targets(root, asked)?.into_iter().unzip();
    let page_bytes = pages::page_size_bytes();
    let mapped = mapped(root, pid, &ranges, page_bytes)?;
    if mapped.parts.is_empty() {
        return Err(PageSetError::NothingMapped { pid });
    }
    let addresses = page_move::pages_of(&mapped.parts, page_bytes);
    let states = residencies(root, pid, &addresses, &mapped.vmas, notes)?;
    Ok(PageSet {
        comm: stat.comm,
        start_time,
        targets,
        ranges,
        page_bytes,
        mapped,
        addresses,
        states,
    })
}

/// The ranges asked for, each described for the plan.
fn targets(root: &Root, args: &Asked) -> Result<Vec<(Target, Range<u64>)>, PageSetError> {
    let target = |what: String, object: Option<String>, r: Range<u64>| {
        (
            Target {
                what,
                object,
                start: r.start,
                end: r.end,
            },
            r,
        )
    };
    if let Some((start, end)) = args.range {
        return Ok(vec![target("range".into(), None, start..end)]);
    }
    let objects = ProcessObjects::load(root, args.pid)?;
    if let Some(name) = args.symbol.as_deref() {
        let found = objects.find_symbol(name, args.object.as_deref())?;
        let placed: Vec<_> = found
            .into_iter()
            .filter_map(|l| {
                let r = l.runtime?;
                Some(target(
                    format!("symbol {} of {}", l.symbol.name, l.object),
                    Some(l.object),
                    r,
                ))
            })
            .collect();
        if placed.is_empty() {
            return Err(PageSetError::ThreadLocal { name: name.to_string() });
        }
        return Ok(placed);
    }
    let section = args.section.as_deref().unwrap_or(".bss");
    let found = objects.section_ranges(section, args.object.as_deref())?;
    Ok(found
        .into_iter()
        .map(|s| target(format!("{} of {}", s.section, s.object), Some(s.object), s.runtime))
        .collect())
}

/// Mappings listed in the plan (`numa_maps_before` / `_after`); a range
/// spanning more is refused, so the listing stays bounded too.
const MAX_MAPPINGS: u64 = 65_536;

/// What the process maps inside the asked ranges, read from one streaming
/// pass over maps and numa_maps: memory stays bounded by the caps however
/// many mappings the process has and however wide the range is.
#[derive(Default)]
pub struct Mapped {
    /// The asked ranges clipped to the mappings: only these become pages.
    pub parts: Vec<Range<u64>>,
    pub pages: u64,
    pub mapped_bytes: u64,
    pub mappings: u64,
    /// numa_maps of every mapping touched: an address outside their spans
    /// is unmapped, inside them it is at most not yet touched.
    pub vmas: Vec<VmaPages>,
}

pub fn mapped(root: &Root, pid: u32, ranges: &[Range<u64>], page_bytes: u64) -> Result<Mapped, PageSetError> {
    let mut found = Mapped::default();
    for_each_vma(root, pid, |vma| {
        let span = vma.mapping.start..vma.mapping.end;
        let mut touched = false;
        for part in page_move::clip(ranges, &span) {
            touched = true;
            found.pages = found.pages.saturating_add(page_move::page_count(&part, page_bytes));
            found.mapped_bytes = found.mapped_bytes.saturating_add(part.end - part.start);
            // Past the cap the answer is a refusal: keep counting, stop storing.
            if found.pages <= page_move::MAX_PAGES {
                found.parts.push(part);
            }
        }
        if !touched {
            return;
        }
        found.mappings += 1;
        if found.mappings <= MAX_MAPPINGS {
            let pages_by_node = vma.numa.as_ref().map(|n| n.pages_by_node.clone()).unwrap_or_default();
            found.vmas.push(VmaPages { span, pages_by_node });
        }
    })?;
    if found.pages > page_move::MAX_PAGES {
        return Err(PageSetError::TooManyPages {
            pid,
            pages: found.pages,
            mapped_bytes: found.mapped_bytes,
            page_bytes,
        });
    }
    if found.mappings > MAX_MAPPINGS {
        return Err(PageSetError::TooManyMappings {
            pid,
            mappings: found.mappings,
        });
    }
    Ok(found)
}

/// What each page is: move_pages' answer read with pagemap and the
/// mappings, so "not present" becomes "not yet touched" or "between
/// hinting faults", and only a hole is "unmapped".
pub fn residencies(
    root: &Root,
    pid: u32,
    addresses: &[u64],
    mapped: &[VmaPages],
    notes: &mut Vec<String>,
) -> Result<Vec<Residency>, PageSetError> {
    let statuses = pages::query(pid, addresses).map_err(|error| PageSetError::Query { error })?;
    let entries = match pagemap::read(root, pid, addresses, pages::page_size_bytes()) {
        Ok(entries) => Some(entries),
        Err(e) => {
            let note = format!(
                "{e}: a page move_pages calls not present cannot be told apart (never touched, swapped out, or \
                 resident between NUMA-balancing hinting faults); it is counted as not yet touched"
            );
            if !notes.contains(&note) {
                notes.push(note);
            }
            None
        }
    };
    Ok(addresses
        .iter()
        .zip(statuses)
        .enumerate()
        .map(|(i, (a, status))| {
            let inside = mapped.iter().any(|v| v.span.contains(a));
            pages::residency(status, entries.as_ref().map(|e| e[i]), inside)
        })
        .collect())
}
