//! A series of page moves of one process under one journal, for
//! experiments that move sets of pages away and back many times
//! (`bisect`), ending with every page where it was.
//!
//! The journal lists every page the series may move, with the node it was
//! on and the node it may be sent to, and is written before the first
//! move; so if numasleuth is killed part-way, `numasleuth undo JOURNAL`
//! sends back every page still away. [`PageSession::finish`] does the same
//! itself and removes the journal only when no page is left away.

use std::path::{Path, PathBuf};

use numasleuth_kernel::pages::{PageStatus, BATCH_PAGES};
use numasleuth_kernel::Root;

use crate::apply::{require_identity, ChangeError};
use crate::error::JournalRefusal;
use crate::journal::{Journal, PageMove};
use crate::pages::{self, batches, check_processes, query_revealing, send, Reveals, Sent};
use crate::seal::JournalKey;

/// An open series of moves; the journal is on disk.
#[derive(Debug)]
pub struct PageSession {
    journal: Journal,
    path: PathBuf,
    pid: u32,
}

/// What a move of a set of pages did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SetMoved {
    pub attempted: u64,
    /// Pages a fresh query found at their destination.
    pub verified: u64,
}

/// Where the pages were at the end.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Restored {
    pub pages: u64,
    /// Pages sent home by the final check (0 when every step had already
    /// moved its set back).
    pub sent_home: u64,
    /// Pages on the node they started on.
    pub home: u64,
    /// Pages still on the node the series sent them to: the journal is
    /// kept for `undo`.
    pub still_away: u64,
    /// Pages on neither node or not resident (something else moved or
    /// dropped them); left alone, as `undo` would.
    pub elsewhere: u64,
    /// The journal, when it was kept.
    pub journal_kept: Option<String>,
}

impl PageSession {
    /// Checks the machine and the process and writes the journal. Nothing
    /// has moved yet.
    pub fn begin(root: &Root, mut journal: Journal, path: &Path, key: &JournalKey) -> Result<Self, ChangeError> {
        if journal.kind != pages::KIND || journal.page_moves.is_empty() {
            return Err(ChangeError::Journal {
                path: path.display().to_string(),
                why: JournalRefusal::NotPageMoves,
            });
        }
        require_identity(root)?;
        check_processes(root, &journal.page_moves)?;
        journal.page_moves.sort_by_key(|m| m.address);
        journal.save(path, key)?;
        let pid = journal.page_moves[0].pid;
        Ok(PageSession {
            journal,
            path: path.to_path_buf(),
            pid,
        })
    }

    pub fn journal_path(&self) -> &Path {
        &self.path
    }

    /// The journal's run holding `address`, if any.
    fn run_of(&self, address: u64) -> Option<&PageMove> {
        let moves = &self.journal.page_moves;
        let after = moves.partition_point(|m| m.address <= address);
        let m = moves.get(after.checked_sub(1)?)?;
        let end = m.address.saturating_add(m.pages.saturating_mul(m.page_bytes));
        (address < end).then_some(m)
    }

    /// Sends `addresses` (pages of the journal) to their destination node,
    /// or home with `home`, in batches, verifying each batch.
    fn move_set(&mut self, root: &Root, addresses: &[u64], home: bool) -> Result<SetMoved, ChangeError> {
        check_processes(root, &self.journal.page_moves)?;
        let mut groups: Vec<(u32, Vec<u64>)> = Vec::new();
        for &address in addresses {
            let Some(m) = self.run_of(address) else {
                return Err(ChangeError::Journal {
                    path: self.path.display().to_string(),
                    why: JournalRefusal::PageNotJournalled { address },
                });
            };
            let node = if home { m.from_node } else { m.to_node };
            match groups.last_mut() {
                Some((n, batch)) if *n == node && batch.len() < BATCH_PAGES => batch.push(address),
                _ => groups.push((node, vec![address])),
            }
        }
        let mut sent = Sent::default();
        let mut reveals = Reveals::default();
        send(root, self.pid, groups.into_iter(), &mut sent, &mut reveals)?;
        Ok(SetMoved {
            attempted: sent.attempted,
            verified: sent.verified,
        })
    }

    /// Sends the pages away from where they were.
    pub fn send_away(&mut self, root: &Root, addresses: &[u64]) -> Result<SetMoved, ChangeError> {
        self.move_set(root, addresses, false)
    }

    /// Sends the pages back where they were.
    pub fn bring_back(&mut self, root: &Root, addresses: &[u64]) -> Result<SetMoved, ChangeError> {
        self.move_set(root, addresses, true)
    }

    /// Checks every page of the journal, sends home any still away, and
    /// removes the journal when none is left away. On an error the
    /// journal is kept (and named in the caller's message).
    pub fn finish(self, root: &Root) -> Result<Restored, ChangeError> {
        check_processes(root, &self.journal.page_moves)?;
        let mut restored = Restored {
            pages: 0,
            sent_home: 0,
            home: 0,
            still_away: 0,
            elsewhere: 0,
            journal_kept: None,
        };
        let mut reveals = Reveals::default();
        for (m, (_, addrs)) in self
            .journal
            .page_moves
            .iter()
            .flat_map(|m| batches(std::slice::from_ref(m)).map(move |b| (m, b)))
        {
            restored.pages += addrs.len() as u64;
            let mut away = Vec::new();
            for state in query_revealing(root, self.pid, &addrs, m.from_node, &mut reveals)? {
                match state.status {
                    PageStatus::Node(n) if n == m.from_node => restored.home += 1,
                    PageStatus::Node(n) if n == m.to_node => away.push(state.address),
                    _ => restored.elsewhere += 1,
                }
            }
            if away.is_empty() {
                continue;
            }
            let mut sent = Sent::default();
            send(
                root,
                self.pid,
                std::iter::once((m.from_node, away.clone())),
                &mut sent,
                &mut reveals,
            )?;
            restored.sent_home += sent.verified;
            restored.home += sent.verified;
            restored.still_away += away.len() as u64 - sent.verified;
        }
        if restored.still_away == 0 {
            let _ = std::fs::remove_file(&self.path);
        } else {
            restored.journal_kept = Some(self.path.display().to_string());
        }
        Ok(restored)
    }
}
