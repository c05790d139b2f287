//! Moving pages of a live process with a journal, and moving them back.
//!
//! Like the file changes, the journal is written before the first page
//! moves, and `undo` only acts on the machine and boot that wrote it. A
//! process is more fragile than a kernel file: it may have exited, or its
//! PID may now belong to another process, so every step first checks the
//! PID's start time against the journal's. Pages are verified with a fresh
//! `move_pages` query after moving either way. A page that something else
//! moved in the meantime (AutoNUMA, another tool) is left where it is on
//! undo and reported, never moved blindly.
//!
//! A resident page the NUMA-balancing scanner has marked PROT_NONE is
//! invisible to move_pages on 6.1-era kernels, for moves and queries alike,
//! until the process touches it. Such pages (move_pages: "not present",
//! pagemap: present) are read once through process_vm_readv, which ends
//! the hinting fault without migrating them, and then moved or queried
//! again; otherwise a move would leave them behind and call them "not
//! resident".

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use numasleuth_kernel::pages::{self, PageStatus, Residency};
use numasleuth_kernel::procfs::pagemap;
use numasleuth_kernel::procfs::process::{read_process_stat, ProcessError};
use numasleuth_kernel::Root;
use serde::Serialize;

use crate::apply::{check_machine, require_identity, ChangeError};
use crate::error::JournalRefusal;
use crate::journal::{Journal, PageMove};
use crate::seal::JournalKey;

/// The journal kind of page moves.
pub const KIND: &str = "pages";

/// One page and where it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct PageState {
    pub address: u64,
    pub status: PageStatus,
    /// The status read with pagemap: "not yet touched" and "between
    /// hinting faults" are both "not present" to move_pages.
    pub residency: Residency,
}

/// What an apply or undo did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PagesOutcome {
    /// Pages in the journal.
    pub pages: u64,
    /// Pages this step asked the kernel to move.
    pub attempted: u64,
    /// Pages a query afterwards finds where they were sent.
    pub verified: u64,
    /// Pages sent but not found at their destination, and where they are
    /// (the first 4,096; `attempted - verified` counts them all).
    pub not_moved: Vec<PageState>,
    /// Undo only: pages on neither node of the journal (moved since, by
    /// AutoNUMA or another tool, or no longer resident), left alone (the
    /// first 4,096 of `left_alone_pages`).
    pub left_alone: Vec<PageState>,
    pub left_alone_pages: u64,
    /// Undo only: pages already on the node they came from, so left where
    /// they are: the move never reached them (it was killed or failed part
    /// way) or something sent them back since.
    pub already_home_pages: u64,
    /// Pages read once to end a NUMA-balancing hinting fault, so that
    /// move_pages could see them.
    pub revealed: u64,
    /// Why hidden pages could not be read, when they could not.
    pub reveal_failed: Option<String>,
}

/// The process each move names must be the very one: alive, same start.
pub(crate) fn check_processes(root: &Root, moves: &[PageMove]) -> Result<(), ChangeError> {
    let processes: BTreeSet<(u32, u64)> = moves.iter().map(|m| (m.pid, m.pid_start_time)).collect();
    for (pid, start) in processes {
        match read_process_stat(root, pid) {
            Ok(stat) if stat.start_time_ticks == Some(start) => {}
            Ok(stat) => {
                return Err(ChangeError::PidReused {
                    pid,
                    journal: start,
                    now: stat.start_time_ticks.unwrap_or(0),
                })
            }
            Err(ProcessError::NoSuchProcess { .. } | ProcessError::Exited { .. }) => {
                return Err(ChangeError::ProcessGone { pid })
            }
            Err(e) => return Err(ChangeError::Process(e)),
        }
    }
    Ok(())
}

/// Pages revealed, and why revealing failed, over one apply or undo.
#[derive(Default)]
pub(crate) struct Reveals {
    pages: u64,
    failed: Option<String>,
}

impl Reveals {
    /// Ends the hinting faults of the `hidden` pages of `pid`; a refusal
    /// (ptrace rights) is remembered, not fatal: those pages stay unmoved
    /// and are reported as between hinting faults.
    fn reveal(&mut self, pid: u32, hidden: &[u64], node: u32) {
        if hidden.is_empty() {
            return;
        }
        match pages::reveal(pid, hidden, node) {
            Ok(done) => self.pages += done.read,
            Err(e) => self.failed = Some(format!("reading the pages to end their hinting faults: {e}")),
        }
    }
}

/// The pages among `addrs` whose `statuses` say "not present" while
/// pagemap says present: hidden between NUMA-balancing hinting faults.
fn hidden(root: &Root, pid: u32, addrs: &[u64], statuses: &[PageStatus]) -> Vec<u64> {
    let absent: Vec<u64> = addrs
        .iter()
        .zip(statuses)
        .filter(|(_, s)| **s == PageStatus::NotPresent)
        .map(|(a, _)| *a)
        .collect();
    if absent.is_empty() {
        return absent;
    }
    let Ok(entries) = pagemap::read(root, pid, &absent, pages::page_size_bytes()) else {
        return Vec::new();
    };
    absent
        .into_iter()
        .zip(entries)
        .filter(|(_, e)| e.present)
        .map(|(a, _)| a)
        .collect()
}

/// A query of `addrs` that sees hidden pages too: those are revealed and
/// asked again. Each answer comes with its residency.
pub(crate) fn query_revealing(
    root: &Root,
    pid: u32,
    addrs: &[u64],
    node: u32,
    reveals: &mut Reveals,
) -> Result<Vec<PageState>, ChangeError> {
    let mut statuses = pages::query(pid, addrs)?;
    let hidden = hidden(root, pid, addrs, &statuses);
    if !hidden.is_empty() {
        reveals.reveal(pid, &hidden, node);
        let again = pages::query(pid, &hidden)?;
        let fresh: BTreeMap<u64, PageStatus> = hidden.into_iter().zip(again).collect();
        for (address, status) in addrs.iter().zip(statuses.iter_mut()) {
            if let Some(s) = fresh.get(address) {
                *status = *s;
            }
        }
    }
    let entries = pagemap::read(root, pid, addrs, pages::page_size_bytes()).ok();
    Ok(addrs
        .iter()
        .zip(statuses)
        .enumerate()
        .map(|(i, (&address, status))| PageState {
            address,
            status,
            // The addresses were planned inside the process's mappings.
            residency: pages::residency(status, entries.as_ref().map(|e| e[i]), true),
        })
        .collect())
}

/// What sending pages did so far, kept even when a later step fails: the
/// journal must outlive any page that may have moved.
#[derive(Default)]
pub(crate) struct Sent {
    pub(crate) attempted: u64,
    pub(crate) verified: u64,
    pub(crate) not_moved: Vec<PageState>,
    /// move_pages calls that returned: each may have moved pages.
    pub(crate) calls_returned: u64,
}

/// Sends runs of pages (one process; a destination each) in batches of
/// [`pages::BATCH_PAGES`] and checks each batch with a fresh query. Pages
/// are never materialised beyond one batch, whatever a journal claims.
/// Pages the move could not see because they were between hinting faults
/// are revealed and sent once more.
pub(crate) fn send(
    root: &Root,
    pid: u32,
    runs: impl Iterator<Item = (u32, Vec<u64>)>,
    sent: &mut Sent,
    reveals: &mut Reveals,
) -> Result<(), ChangeError> {
    for (node, addrs) in runs {
        let moved = pages::move_to(pid, &addrs, node, false)?;
        sent.calls_returned += 1;
        let hidden = hidden(root, pid, &addrs, &moved);
        if !hidden.is_empty() {
            reveals.reveal(pid, &hidden, node);
            pages::move_to(pid, &hidden, node, false)?;
        }
        sent.attempted += addrs.len() as u64;
        for state in query_revealing(root, pid, &addrs, node, reveals)? {
            if state.status == PageStatus::Node(node) {
                sent.verified += 1;
            } else if sent.not_moved.len() < MAX_LISTED_PAGES {
                sent.not_moved.push(state);
            }
        }
    }
    Ok(())
}

/// Pages listed one by one in an outcome; counts stay exact beyond it.
const MAX_LISTED_PAGES: usize = 4096;

/// One batch at a time: each run of pages, cut into batches.
pub(crate) fn batches(moves: &[PageMove]) -> impl Iterator<Item = (u32, Vec<u64>)> + '_ {
    moves.iter().flat_map(move |m| {
        let node = m.to_node;
        let batch = pages::BATCH_PAGES as u64;
        (0..m.pages.div_ceil(batch)).map(move |b| {
            let first = b * batch;
            let count = batch.min(m.pages - first);
            (
                node,
                (first..first + count).map(|i| m.address + i * m.page_bytes).collect(),
            )
        })
    })
}

/// Checks the process, writes the journal, moves every page to its
/// `to_node` and verifies. If no page could be moved the journal is
/// removed (there is nothing to undo) and that is an error; if a step fails
/// after pages may have moved, the journal is kept and the error says so.
pub fn apply_pages(
    root: &Root,
    journal: &mut Journal,
    journal_path: &Path,
    key: &JournalKey,
) -> Result<PagesOutcome, ChangeError> {
    if journal.kind != KIND || journal.page_moves.is_empty() {
        return Err(ChangeError::Journal {
            path: journal_path.display().to_string(),
            why: JournalRefusal::NotPageMoves,
        });
    }
    require_identity(root)?;
    check_processes(root, &journal.page_moves)?;
    journal.save(journal_path, key)?;
    let pid = journal.page_moves[0].pid;
    let mut sent = Sent::default();
    let mut reveals = Reveals::default();
    let outcome = send(root, pid, batches(&journal.page_moves), &mut sent, &mut reveals);
    let journal_shown = journal_path.display().to_string();
    match outcome {
        Ok(()) if sent.verified > 0 => {}
        Ok(()) => {
            let _ = std::fs::remove_file(journal_path);
            return Err(ChangeError::NothingMoved {
                why: describe(&sent.not_moved),
            });
        }
        // move_pages fails as a whole (no process, no permission, bad
        // node) before moving anything: no journal for no change.
        Err(e) if sent.calls_returned == 0 => {
            let _ = std::fs::remove_file(journal_path);
            return Err(e);
        }
        Err(e) => {
            return Err(ChangeError::PagesPartlyMoved {
                failure: e.to_string(),
                moved: sent.verified,
                journal: journal_shown,
            })
        }
    }
    Ok(PagesOutcome {
        pages: total_pages(&journal.page_moves),
        attempted: sent.attempted,
        verified: sent.verified,
        not_moved: sent.not_moved,
        left_alone: Vec::new(),
        left_alone_pages: 0,
        already_home_pages: 0,
        revealed: reveals.pages,
        reveal_failed: reveals.failed,
    })
}

fn total_pages(moves: &[PageMove]) -> u64 {
    moves.iter().map(|m| m.pages).sum()
}

fn describe(states: &[PageState]) -> String {
    let mut counts: BTreeMap<String, u64> = BTreeMap::new();
    for s in states {
        let what = match s.residency {
            Residency::Node(n) => format!("still on node {n}"),
            Residency::Unknown(errno) => format!("refused ({})", std::io::Error::from_raw_os_error(errno)),
            other => other.describe(),
        };
        *counts.entry(what).or_insert(0) += 1;
    }
    let parts: Vec<String> = counts.into_iter().map(|(what, n)| format!("{n} {what}")).collect();
    parts.join(", ")
}

/// Moves every page of a page-move journal back to its `from_node`, if
/// it is still on the `to_node` the move sent it to. The journal is never
/// removed here: a failure part-way leaves it for another try.
pub fn undo_pages(root: &Root, journal: &Journal, journal_path: &Path) -> Result<PagesOutcome, ChangeError> {
    check_machine(root, journal, journal_path)?;
    check_processes(root, &journal.page_moves)?;
    let pid = journal.page_moves[0].pid;
    let mut left_alone = Vec::new();
    let mut left_alone_pages = 0u64;
    let mut already_home_pages = 0u64;
    let mut sent = Sent::default();
    let mut reveals = Reveals::default();
    for (m, (_, addrs)) in journal
        .page_moves
        .iter()
        .flat_map(|m| batches(std::slice::from_ref(m)).map(move |b| (m, b)))
    {
        let mut back = Vec::new();
        // A page the move put there may since be between hinting faults:
        // it is still there, and must go back too.
        for state in query_revealing(root, pid, &addrs, m.to_node, &mut reveals)? {
            if state.status == PageStatus::Node(m.to_node) {
                back.push(state.address);
            } else if state.status == PageStatus::Node(m.from_node) {
                already_home_pages += 1;
            } else {
                left_alone_pages += 1;
                if left_alone.len() < MAX_LISTED_PAGES {
                    left_alone.push(state);
                }
            }
        }
        if !back.is_empty() {
            send(root, pid, std::iter::once((m.from_node, back)), &mut sent, &mut reveals)?;
        }
    }
    Ok(PagesOutcome {
        pages: total_pages(&journal.page_moves),
        attempted: sent.attempted,
        verified: sent.verified,
        not_moved: sent.not_moved,
        left_alone,
        left_alone_pages,
        already_home_pages,
        revealed: reveals.pages,
        reveal_failed: reveals.failed,
    })
}
