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

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use numasleuth_kernel::pages::{self, PageStatus};
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

/// Sends each group of pages (one process, one destination) and checks
/// them with a fresh query. `targets` is (pid, destination, addresses).
fn send(targets: BTreeMap<(u32, u32), Vec<u64>>) -> Result<(u64, u64, Vec<PageState>), ChangeError> {
    let (mut attempted, mut verified, mut not_moved) = (0, 0, Vec::new());
    for ((pid, node), addrs) in targets {
        pages::move_to(pid, &addrs, node, false)?;
        attempted += addrs.len() as u64;
        for (address, status) in addrs.iter().zip(pages::query(pid, &addrs)?) {
            if status == PageStatus::Node(node) {
                verified += 1;
            } else {
                not_moved.push(PageState {
                    address: *address,
                    status,
                });
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
    let outcome = send(targets);
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
    })
}

fn describe(states: &[PageState]) -> String {
    let mut counts: BTreeMap<String, u64> = BTreeMap::new();
    for s in states {
        let what = match s.status {
            PageStatus::Node(n) => format!("still on node {n}"),
            PageStatus::NotPresent => "not present (not resident)".into(),
            PageStatus::ZeroOrUnmapped => "the zero page or unmapped".into(),
            PageStatus::Failed(errno) => format!("refused ({})", std::io::Error::from_raw_os_error(errno)),
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
    for m in &journal.page_moves {
        let addrs: Vec<u64> = addresses(m).collect();
        for (address, status) in addrs.iter().zip(pages::query(m.pid, &addrs)?) {
            if status == PageStatus::Node(m.to_node) {
                targets.entry((m.pid, m.from_node)).or_default().push(*address);
            } else {
                left_alone.push(PageState {
                    address: *address,
                    status,
                });
            }
        }
    }
    let (attempted, verified, not_moved) = send(targets)?;
    Ok(PagesOutcome {
        pages: journal.page_moves.iter().map(|m| m.pages).sum(),
        attempted,
        verified,
        not_moved,
        left_alone,
    })
}
