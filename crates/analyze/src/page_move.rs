//! Planning and checking a page move (`numasleuth move`): which pages of
//! the asked ranges sit where, which would move, and afterwards whether
//! they did. Pure: the node of each page comes from a `move_pages` query
//! made by the caller.
//!
//! Pages are described as runs (consecutive pages on one node) so a plan
//! for a large range stays short and exact. A page not yet touched cannot
//! be moved: it is counted and explained, since it will be placed wherever
//! it is first touched. A resident page hidden from move_pages between
//! NUMA-balancing hinting faults is listed apart: it can move once the
//! fault is over.

use std::collections::BTreeMap;
use std::ops::Range;

use numasleuth_model::hex::Hex;
use numasleuth_model::Topology;
use numasleuth_parse::pages::{PageStatus, Residency};
use serde::Serialize;

/// Consecutive pages with one status, as `move --json` lists them (the
/// start as a hex string).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PageRun {
    #[serde(serialize_with = "numasleuth_model::hex::serialize")]
    pub start: u64,
    pub pages: u64,
    /// The node they are on; `None` when not resident (or not mapped).
    pub node: Option<u32>,
    /// What the pages are when not on a node (`hinting-fault`,
    /// `not-yet-touched`, `swapped-out`, `zero-page`, `unmapped`), where
    /// the run was grouped by what the pages are ([`state_runs`], the
    /// plan's `hinting`); `None` where grouped by node alone.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub state: Option<Residency>,
}

/// One range asked for: a section, a symbol, or a raw range, with its
/// bounds as hex strings in a document.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Target {
    /// As a person reads it: `.bss of /usr/bin/app`, `symbol nil_root`.
    pub what: String,
    pub object: Option<String>,
    #[serde(serialize_with = "numasleuth_model::hex::serialize")]
    pub start: u64,
    #[serde(serialize_with = "numasleuth_model::hex::serialize")]
    pub end: u64,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct MovePlan {
    pub to_node: u32,
    pub page_bytes: u64,
    pub pages_total: u64,
    /// Resident pages per node that move_pages can see, before the move.
    pub by_node: BTreeMap<u32, u64>,
    pub already_there: u64,
    /// Resident, but hidden from move_pages between NUMA-balancing hinting
    /// faults: their node is unknown until the process touches them (or
    /// `--apply` ends the fault by reading them), and they cannot move
    /// before that.
    pub hinting: Vec<PageRun>,
    /// Inside a mapping and never touched: nothing to move; they will be
    /// placed where first touched.
    pub not_present: u64,
    pub swapped_out: u64,
    /// Read, never written: the shared zero page belongs to no process.
    pub zero_page: u64,
    /// Outside every mapping.
    pub unmapped: u64,
    /// Pages the query could not answer for, with the errno.
    pub query_failed: u64,
    /// What would move, in address order.
    pub to_move: Vec<PageRun>,
}

impl MovePlan {
    pub fn pages_to_move(&self) -> u64 {
        self.to_move.iter().map(|r| r.pages).sum()
    }

    pub fn pages_hinting(&self) -> u64 {
        self.hinting.iter().map(|r| r.pages).sum()
    }

    /// Every page address that would move.
    pub fn addresses(&self) -> Vec<u64> {
        expand(&self.to_move, self.page_bytes)
    }

    /// Every page address between hinting faults.
    pub fn hinting_addresses(&self) -> Vec<u64> {
        expand(&self.hinting, self.page_bytes)
    }
}

fn expand(runs: &[PageRun], page_bytes: u64) -> Vec<u64> {
    runs.iter()
        .flat_map(|r| (0..r.pages).map(move |i| r.start + i * page_bytes))
        .collect()
}

/// Pages one `move` considers at most: 4 GiB of 4 KiB pages. Each costs 16
/// bytes here (address and status) and a slot in a move_pages batch, so
/// the cap bounds memory and time whatever range is typed.
pub const MAX_PAGES: u64 = 1 << 20;

/// The parts of `ranges` inside `mapping`: what a process can have pages
/// in. A range is never turned into pages before this, since `0-ffff…`
/// would be petabytes of addresses.
pub fn clip<'a>(ranges: &'a [Range<u64>], mapping: &'a Range<u64>) -> impl Iterator<Item = Range<u64>> + 'a {
    ranges
        .iter()
        .map(|r| r.start.max(mapping.start)..r.end.min(mapping.end))
        .filter(|r| r.start < r.end)
}

/// How many pages cover `range`, counted without listing them.
pub fn page_count(range: &Range<u64>, page_bytes: u64) -> u64 {
    if range.start >= range.end {
        return 0;
    }
    let page = page_bytes.max(1);
    (range.end - 1) / page - range.start / page + 1
}

/// The bytes `ranges` ask for, summed as given (overlaps count twice, an
/// empty or backwards range counts 0): what `move` compares with the
/// mapped bytes to say how much of the request is not mapped.
pub fn asked_bytes(ranges: &[Range<u64>]) -> u64 {
    ranges
        .iter()
        .fold(0u64, |sum, r| sum.saturating_add(r.end.saturating_sub(r.start)))
}

/// The distinct pages covering `ranges`, in address order. Callers bound
/// the ranges first ([`clip`] to the mappings, [`MAX_PAGES`]): this lists
/// every page.
pub fn pages_of(ranges: &[Range<u64>], page_bytes: u64) -> Vec<u64> {
    let page = page_bytes.max(1);
    let mut pages: Vec<u64> = ranges
        .iter()
        .filter(|r| r.end > r.start)
        .flat_map(|r| {
            let first = r.start / page * page;
            let last = (r.end - 1) / page * page;
            (0..=(last - first) / page).map(move |i| first + i * page)
        })
        .collect();
    pages.sort_unstable();
    pages.dedup();
    pages
}

/// Groups `(address, node)` into runs of consecutive pages.
pub fn runs(pages: impl IntoIterator<Item = (u64, Option<u32>)>, page_bytes: u64) -> Vec<PageRun> {
    let mut out: Vec<PageRun> = Vec::new();
    for (address, node) in pages {
        match out.last_mut() {
            // Checked: the last page of the address space has no successor.
            Some(run)
                if run.node == node
                    && run.pages.checked_mul(page_bytes).and_then(|b| run.start.checked_add(b)) == Some(address) =>
            {
                run.pages += 1
            }
            _ => out.push(PageRun {
                start: address,
                pages: 1,
                node,
                state: None,
            }),
        }
    }
    out
}

/// Runs of consecutive pages in one state, from `(address, residency)`:
/// where pages that were meant to move are, each run saying what its pages
/// are when they are on no node.
pub fn state_runs(pages: &[(u64, Residency)], page_bytes: u64) -> Vec<PageRun> {
    let mut out: Vec<(u64, u64, Residency)> = Vec::new();
    for &(address, state) in pages {
        match out.last_mut() {
            // Checked: the last page of the address space has no successor.
            Some((start, n, s))
                if *s == state && n.checked_mul(page_bytes).and_then(|b| start.checked_add(b)) == Some(address) =>
            {
                *n += 1
            }
            _ => out.push((address, 1, state)),
        }
    }
    out.into_iter()
        .map(|(start, pages, state)| PageRun {
            start,
            pages,
            node: state.node(),
            state: state.node().is_none().then_some(state),
        })
        .collect()
}

/// Pages per node as a document keys them: by the node's number as a
/// string, in string order (`"10"` before `"2"`), as `move --json` always
/// has; a node listed twice keeps its last count.
pub fn keyed_by_node(pages_by_node: impl IntoIterator<Item = (u32, u64)>) -> BTreeMap<String, u64> {
    pages_by_node.into_iter().map(|(n, p)| (n.to_string(), p)).collect()
}

/// What would move to `to_node`, given what each page is.
pub fn plan(pages: &[u64], residency: &[Residency], to_node: u32, page_bytes: u64) -> MovePlan {
    let mut plan = MovePlan {
        to_node,
        page_bytes,
        pages_total: pages.len() as u64,
        by_node: BTreeMap::new(),
        already_there: 0,
        hinting: Vec::new(),
        not_present: 0,
        swapped_out: 0,
        zero_page: 0,
        unmapped: 0,
        query_failed: 0,
        to_move: Vec::new(),
    };
    let mut moving = Vec::new();
    let mut hidden = Vec::new();
    for (&address, state) in pages.iter().zip(residency) {
        match *state {
            Residency::Node(node) => {
                *plan.by_node.entry(node).or_insert(0) += 1;
                if node == to_node {
                    plan.already_there += 1;
                } else {
                    moving.push((address, Some(node)));
                }
            }
            Residency::HintingFault => hidden.push((address, None)),
            Residency::NotYetTouched => plan.not_present += 1,
            Residency::SwappedOut => plan.swapped_out += 1,
            Residency::ZeroPage => plan.zero_page += 1,
            Residency::Unmapped => plan.unmapped += 1,
            Residency::Unknown(_) => plan.query_failed += 1,
        }
    }
    plan.to_move = runs(moving, page_bytes);
    plan.hinting = runs(hidden, page_bytes)
        .into_iter()
        .map(|r| PageRun {
            state: Some(Residency::HintingFault),
            ..r
        })
        .collect();
    plan
}

/// After a move: where the pages that were meant to move are now.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct MoveCheck {
    pub on_target: u64,
    /// Pages not on the target node, with where they are.
    pub elsewhere: Vec<PageRun>,
}

pub fn check(pages: &[u64], statuses: &[PageStatus], to_node: u32, page_bytes: u64) -> MoveCheck {
    let mut on_target = 0;
    let mut elsewhere = Vec::new();
    for (&address, status) in pages.iter().zip(statuses) {
        match status {
            PageStatus::Node(n) if *n == to_node => on_target += 1,
            PageStatus::Node(n) => elsewhere.push((address, Some(*n))),
            _ => elsewhere.push((address, None)),
        }
    }
    MoveCheck {
        on_target,
        elsewhere: runs(elsewhere, page_bytes),
    }
}

/// The target node as the plan describes it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TargetNode {
    pub node: u32,
    pub has_cpus: bool,
    pub memory_total_bytes: Option<u64>,
    /// Said in the plan: e.g. a memory-only node.
    pub note: Option<String>,
}

/// Why `--to-node` names no node pages can be moved to.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TargetNodeError {
    #[error("--to-node {node}: node {node} does not exist (nodes: {nodes})")]
    NoSuchNode { node: u32, nodes: numasleuth_parse::IdList },
    #[error(
        "--to-node {node}: node {node} has no memory (/sys/devices/system/node/has_memory), so no page can live there"
    )]
    NoMemory { node: u32 },
}

/// Refuses a node that does not exist or has no memory; a CPU-less node
/// is allowed (memory can live there) and said so.
pub fn target_node(topology: &Topology, node: u32) -> Result<TargetNode, TargetNodeError> {
    let Some(found) = topology.nodes.iter().find(|n| n.id == node) else {
        let nodes = topology.nodes.iter().map(|n| n.id).collect();
        return Err(TargetNodeError::NoSuchNode { node, nodes });
    };
    if !found.may_hold_memory() {
        return Err(TargetNodeError::NoMemory { node });
    }
    let has_cpus = found.has_cpus();
    Ok(TargetNode {
        node,
        has_cpus,
        memory_total_bytes: found.memory_total_bytes,
        note: (!has_cpus).then(|| {
            format!(
                "node {node} has no CPUs (memory-only: CXL, HBM or similar): the pages can live there, but every \
                 access to them from any thread is remote"
            )
        }),
    })
}

/// numa_maps' page counts for one mapping that holds asked pages.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VmaPages {
    pub span: Range<u64>,
    /// (node, pages), as numa_maps' `N<node>=<pages>` fields.
    pub pages_by_node: Vec<(u32, u64)>,
}

/// As `move --json` lists a mapping: `start` and `end` as hex strings,
/// `pages_by_node` keyed as [`keyed_by_node`] keys it.
impl Serialize for VmaPages {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let mut vma = serializer.serialize_struct("VmaPages", 3)?;
        vma.serialize_field("start", &Hex(self.span.start))?;
        vma.serialize_field("end", &Hex(self.span.end))?;
        vma.serialize_field("pages_by_node", &keyed_by_node(self.pages_by_node.iter().copied()))?;
        vma.end()
    }
}

/// What numa_maps says about an applied move: how many pages `node`
/// gained across the mappings, and whether that covers the pages
/// move_pages verified (other activity may add more, never fewer).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NumaMapsCheck {
    pub gained: i64,
    pub agrees: bool,
}

pub fn numa_maps_check(before: &[VmaPages], after: &[VmaPages], node: u32, verified: u64) -> NumaMapsCheck {
    let on_node = |vmas: &[VmaPages]| -> i64 {
        vmas.iter()
            .flat_map(|v| &v.pages_by_node)
            .filter(|(n, _)| *n == node)
            .map(|&(_, pages)| i64::try_from(pages).unwrap_or(i64::MAX))
            .fold(0i64, i64::saturating_add)
    };
    let gained = on_node(after).saturating_sub(on_node(before));
    NumaMapsCheck {
        gained,
        agrees: gained >= i64::try_from(verified).unwrap_or(i64::MAX),
    }
}

#[cfg(test)]
#[path = "page_move_tests.rs"]
mod tests;
