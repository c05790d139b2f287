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

use crate::apply::{check_machine, ChangeError};
use crate::journal::{Journal, PageMove};

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
    /// Pages sent but not found at their destination, and where they are.
    pub not_moved: Vec<PageState>,
    /// Undo only: pages no longer where the move put them, left alone.
    pub left_alone: Vec<PageState>,
    /// Pages read once to end a NUMA-balancing hinting fault, so that
    /// move_pages could see them.
    pub revealed: u64,
    /// Why hidden pages could not be read, when they could not.
    pub reveal_failed: Option<String>,
}

fn addresses(m: &PageMove) -> impl Iterator<Item = u64> + '_ {
    (0..m.pages).map(move |i| m.address + i * m.page_bytes)
}

/// The process each move names must be the very one: alive, same start.
fn check_processes(root: &Root, moves: &[PageMove]) -> Result<(), ChangeError> {
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
struct Reveals {
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
fn query_revealing(
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

/// Sends each group of pages (one process, one destination) and checks
/// them with a fresh query. `targets` is (pid, destination, addresses).
/// Pages the move could not see because they were between hinting faults
/// are revealed and sent once more.
fn send(
    root: &Root,
    targets: BTreeMap<(u32, u32), Vec<u64>>,
    reveals: &mut Reveals,
) -> Result<(u64, u64, Vec<PageState>), ChangeError> {
    let (mut attempted, mut verified, mut not_moved) = (0, 0, Vec::new());
    for ((pid, node), addrs) in targets {
        let moved = pages::move_to(pid, &addrs, node, false)?;
        let hidden = hidden(root, pid, &addrs, &moved);
        if !hidden.is_empty() {
            reveals.reveal(pid, &hidden, node);
            pages::move_to(pid, &hidden, node, false)?;
        }
        attempted += addrs.len() as u64;
        for state in query_revealing(root, pid, &addrs, node, reveals)? {
            if state.status == PageStatus::Node(node) {
                verified += 1;
            } else {
                not_moved.push(state);
            }
        }
    }
    Ok((attempted, verified, not_moved))
}

/// Checks the process, writes the journal, moves every page to its
/// `to_node` and verifies. If no page could be moved the journal is
/// removed (there is nothing to undo) and that is an error.
pub fn apply_pages(root: &Root, journal: &Journal, journal_path: &Path) -> Result<PagesOutcome, ChangeError> {
    if journal.kind != KIND || journal.page_moves.is_empty() {
        return Err(ChangeError::Journal {
            path: journal_path.display().to_string(),
            why: "not a page-move journal, or it moves no page".into(),
        });
    }
    check_processes(root, &journal.page_moves)?;
    journal.save(journal_path)?;
    let mut targets: BTreeMap<(u32, u32), Vec<u64>> = BTreeMap::new();
    for m in &journal.page_moves {
        targets.entry((m.pid, m.to_node)).or_default().extend(addresses(m));
    }
    let mut reveals = Reveals::default();
    let outcome = send(root, targets, &mut reveals);
    let (attempted, verified, not_moved) = match outcome {
        Ok(done) if done.1 > 0 => done,
        Ok((_, _, not_moved)) => {
            let _ = std::fs::remove_file(journal_path);
            return Err(ChangeError::NothingMoved {
                why: describe(&not_moved),
            });
        }
        Err(e) => {
            // move_pages fails as a whole (no process, no permission, bad
            // node) before moving anything: no journal for no change.
            let _ = std::fs::remove_file(journal_path);
            return Err(e);
        }
    };
    Ok(PagesOutcome {
        pages: journal.page_moves.iter().map(|m| m.pages).sum(),
        attempted,
        verified,
        not_moved,
        left_alone: Vec::new(),
        revealed: reveals.pages,
        reveal_failed: reveals.failed,
    })
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
/// it is still on the `to_node` the move sent it to.
pub fn undo_pages(root: &Root, journal: &Journal, journal_path: &Path) -> Result<PagesOutcome, ChangeError> {
    check_machine(root, journal, journal_path)?;
    check_processes(root, &journal.page_moves)?;
    let mut targets: BTreeMap<(u32, u32), Vec<u64>> = BTreeMap::new();
    let mut left_alone = Vec::new();
    let mut reveals = Reveals::default();
    for m in &journal.page_moves {
        let addrs: Vec<u64> = addresses(m).collect();
        // A page the move put there may since be between hinting faults:
        // it is still there, and must go back too.
        for state in query_revealing(root, m.pid, &addrs, m.to_node, &mut reveals)? {
            if state.status == PageStatus::Node(m.to_node) {
                targets.entry((m.pid, m.from_node)).or_default().push(state.address);
            } else {
                left_alone.push(state);
            }
        }
    }
    let (attempted, verified, not_moved) = send(root, targets, &mut reveals)?;
    Ok(PagesOutcome {
        pages: journal.page_moves.iter().map(|m| m.pages).sum(),
        attempted,
        verified,
        not_moved,
        left_alone,
        revealed: reveals.pages,
        reveal_failed: reveals.failed,
    })
}
