//! The undo journal: what was changed, from what, on which machine and
//! boot, sealed with an HMAC under the user's private key.
//!
//! `undo` runs as root and writes what a journal names, so a journal is
//! treated as hostile until proven otherwise: its file must be ours and
//! private (`crate::trust`), its seal must verify ([`crate::seal`]), and
//! its content must stay inside the closed set of changes `--apply` itself
//! makes ([`Journal::validate`]). Any one of these failing refuses it.

use std::path::Path;

use numasleuth_kernel::{IdList, Root};
use serde::{Deserialize, Serialize};

use crate::apply::ChangeError;
use crate::error::{JournalError, JournalRefusal, Remains, WriteError};
use crate::journal_file::{write_whole, JournalFs, RealFs, Stale};
use crate::seal::JournalKey;

/// Version 2 is sealed with an HMAC; version 1's plain SHA-256 could be
/// recomputed by anyone, so version 1 journals are refused.
pub const SCHEMA: &str = "numasleuth.journal/2";
const SEAL_PREFIX: &str = "hmac-sha256:";

pub const KIND_IRQ: &str = "irq-affinity";

/// The kernel's PID_MAX_LIMIT (2^22).
const MAX_PID: u32 = 1 << 22;
/// The kernel's MAX_NUMNODES upper bound (NODES_SHIFT 10).
const MAX_NODE: u32 = 1 << 10;
/// IRQ numbers are below NR_IRQS plus the MSI space; seven digits is far
/// beyond any real machine and keeps a forged number from being huge.
const MAX_IRQ_DIGITS: usize = 7;
/// Affinity changes in one journal: one per IRQ of a very large machine.
pub(crate) const MAX_FILE_CHANGES: usize = 1 << 16;
/// A CPU list of 65,536 CPUs, fully fragmented, is under this.
const MAX_VALUE_BYTES: usize = 1 << 18;
/// Runs of pages in one journal, and pages in all: 2^24 base pages is
/// 64 GiB, more than any static section we move. The count is checked
/// before anything is materialised from it.
pub(crate) const MAX_PAGE_RUNS: usize = 1 << 20;
pub const MAX_JOURNAL_PAGES: u64 = 1 << 24;
/// User space ends below 2^57 on x86-64 with 5-level paging and below
/// 2^52 on arm64; nothing we move lies above.
const USER_ADDRESS_LIMIT: u64 = 1 << 57;
const MAX_IDENTITY_BYTES: usize = 256;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FileChange {
    /// Kernel file relative to the root, e.g. `proc/irq/30/smp_affinity_list`.
    pub path: String,
    pub before: String,
    pub after: String,
}

/// Pages of one process moved from one node to another: `pages`
/// consecutive base pages from `address`. The process is named by PID and
/// start time, so a reused PID is never mistaken for it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PageMove {
    pub pid: u32,
    /// `starttime` of /proc/PID/stat, in clock ticks after boot.
    pub pid_start_time: u64,
    pub address: u64,
    pub pages: u64,
    pub page_bytes: u64,
    pub from_node: u32,
    pub to_node: u32,
}

/// IRQ numbers and page addresses mean nothing on another machine or
/// after a reboot, so a journal is bound to all three, and a journal that
/// lacks any of them is refused.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MachineIdentity {
    pub machine_id: Option<String>,
    pub hostname: Option<String>,
    pub boot_id: Option<String>,
}

impl MachineIdentity {
    pub fn read(root: &Root) -> Self {
        let read = |path: &str| {
            root.read(path)
                .ok()
                .map(|t| t.trim().to_string())
                .filter(|t| !t.is_empty() && t.len() <= MAX_IDENTITY_BYTES)
        };
        MachineIdentity {
            // systemd writes /etc/machine-id; dbus-only systems keep theirs here.
            machine_id: read("etc/machine-id").or_else(|| read("var/lib/dbus/machine-id")),
            hostname: numasleuth_kernel::procfs::host::hostname(root),
            boot_id: read("proc/sys/kernel/random/boot_id"),
        }
    }

    /// Names the first part that is missing, if any.
    pub fn missing(&self) -> Option<&'static str> {
        let valid = |v: &Option<String>| {
            v.as_deref()
                .is_some_and(|v| !v.is_empty() && v.len() <= MAX_IDENTITY_BYTES)
        };
        [
            ("machine id (/etc/machine-id)", &self.machine_id),
            ("hostname", &self.hostname),
            ("boot id (/proc/sys/kernel/random/boot_id)", &self.boot_id),
        ]
        .into_iter()
        .find(|(_, v)| !valid(v))
        .map(|(what, _)| what)
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Journal {
    pub schema: String,
    /// What the changes are: [`KIND_IRQ`] or [`crate::pages::KIND`].
    pub kind: String,
    pub machine: MachineIdentity,
    pub created_unix_s: u64,
    #[serde(default)]
    pub changes: Vec<FileChange>,
    #[serde(default)]
    pub page_moves: Vec<PageMove>,
    /// `hmac-sha256:` and the HMAC of this journal serialised with an
    /// empty seal; empty until [`Journal::save`].
    pub seal: String,
}

impl Journal {
    pub fn new(kind: &str, machine: MachineIdentity, created_unix_s: u64, changes: Vec<FileChange>) -> Self {
        Journal {
            schema: SCHEMA.into(),
            kind: kind.into(),
            machine,
            created_unix_s,
            changes,
            page_moves: Vec::new(),
            seal: String::new(),
        }
    }

    /// A journal of page moves, kind [`crate::pages::KIND`].
    pub fn pages(machine: MachineIdentity, created_unix_s: u64, page_moves: Vec<PageMove>) -> Self {
        let mut journal = Journal::new(crate::pages::KIND, machine, created_unix_s, Vec::new());
        journal.page_moves = page_moves;
        journal
    }

    /// The bytes the seal covers: everything but the seal itself, in the
    /// fixed field order serde gives a struct.
    fn sealed_bytes(&self) -> Vec<u8> {
        let mut unsealed = self.clone();
        unsealed.seal.clear();
        serde_json::to_vec(&unsealed).unwrap_or_default()
    }

    /// Checks the journal stays inside what `--apply` can make: the closed
    /// set of files, one live process's pages, sane counts, and a complete
    /// identity. The same checks run before saving and after loading, so
    /// numasleuth never writes a journal it would refuse to undo.
    pub fn validate(&self) -> Result<(), JournalError> {
        if self.schema != SCHEMA {
            return Err(JournalError::UnknownSchema {
                schema: numasleuth_kernel::error::quote(&self.schema),
            });
        }
        if let Some(what) = self.machine.missing() {
            return Err(JournalError::NoIdentity { what });
        }
        match self.kind.as_str() {
            KIND_IRQ if self.page_moves.is_empty() => validate_file_changes(&self.changes),
            crate::pages::KIND if self.changes.is_empty() => validate_page_moves(&self.page_moves),
            KIND_IRQ | crate::pages::KIND => Err(JournalError::MixedKinds {
                kind: self.kind.clone(),
            }),
            other => Err(JournalError::UnknownKind {
                kind: numasleuth_kernel::error::quote(other),
            }),
        }
    }

    /// Parses and validates a journal without checking its seal: what the
    /// seal protects must already be well-formed to be worth checking. An
    /// empty or cut-off file is named for what it is (see [`records_nothing`]).
    pub fn from_json(text: &str) -> Result<Journal, JournalError> {
        let journal: Journal = serde_json::from_str(text).map_err(|e| {
            if records_nothing(text) {
                let remains = if text.trim().is_empty() {
                    Remains::Empty
                } else {
                    Remains::CutOff { bytes: text.len() }
                };
                JournalError::RecordsNothing { remains }
            } else {
                JournalError::NotJson(e)
            }
        })?;
        journal.validate()?;
        Ok(journal)
    }

    /// Seals and writes the journal durably, mode 0600, so that it appears
    /// whole or not at all ([`crate::journal_file`]). Refuses a directory
    /// `undo` would refuse, and an existing file unless it records nothing.
    pub fn save(&mut self, path: &Path, key: &JournalKey) -> Result<(), ChangeError> {
        self.save_with(&mut RealFs, path, key)
    }

    /// [`Journal::save`] through `fs_ops`, which the tests stop after any
    /// step, as a kill would.
    pub fn save_with(&mut self, fs_ops: &mut dyn JournalFs, path: &Path, key: &JournalKey) -> Result<(), ChangeError> {
        let fail = |why: JournalRefusal| ChangeError::Journal {
            path: numasleuth_kernel::error::escape(&path.display().to_string()),
            why,
        };
        self.validate().map_err(|e| fail(JournalRefusal::WouldRefuse(e)))?;
        crate::trust::check_directory(path).map_err(|e| fail(JournalRefusal::UnsafeDirectory(e)))?;
        let stale = match std::fs::symlink_metadata(path) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(e) => return Err(fail(JournalRefusal::Write(WriteError::Io(e)))),
            Ok(_) => Some(stale_file(path).map_err(fail)?),
        };
        self.seal = format!("{SEAL_PREFIX}{}", key.seal(&self.sealed_bytes()));
        let text = serde_json::to_string_pretty(self).map_err(|e| fail(JournalRefusal::Encode(e)))?;
        write_whole(fs_ops, path, text.as_bytes(), stale).map_err(|e| fail(JournalRefusal::Write(e)))
    }

    /// Reads, checks and verifies a journal; see the module docs.
    pub fn load(path: &Path, key: &JournalKey) -> Result<Self, ChangeError> {
        let bad = |why: JournalRefusal| ChangeError::Journal {
            path: path.display().to_string(),
            why,
        };
        let text = crate::trust::read_journal_file(path).map_err(|e| bad(JournalRefusal::Untrusted(e)))?;
        let journal = Journal::from_json(&text).map_err(|e| bad(JournalRefusal::Content(e)))?;
        let seal = journal.seal.strip_prefix(SEAL_PREFIX).unwrap_or("");
        if !key.verify(&journal.sealed_bytes(), seal) {
            return Err(bad(JournalRefusal::SealMismatch));
        }
        Ok(journal)
    }
}

/// How `undo` names a journal an `--apply` left empty or cut off.
pub const KILLED_BEFORE_CHANGE: &str = "an --apply killed before it changed anything";

/// An empty file, or the start of a JSON object that ends too early: what
/// a kill while a journal was written in place left (numasleuth before
/// 0.2 did that). Every numasleuth syncs the whole journal before its first
/// change, so such a file records a run that changed nothing.
pub fn records_nothing(text: &str) -> bool {
    let trimmed = text.trim_start();
    trimmed.is_empty()
        || (trimmed.starts_with('{') && serde_json::from_str::<serde_json::Value>(text).is_err_and(|e| e.is_eof()))
}

/// The file at a journal's path, if a new journal may replace it: our own
/// private file (`undo`'s checks) that records nothing. Anything else is
/// refused with the reason.
fn stale_file(path: &Path) -> Result<Stale, JournalRefusal> {
    let (text, meta) = crate::trust::read_journal_file_with_meta(path).map_err(JournalRefusal::NotReplaceable)?;
    if records_nothing(&text) {
        return Ok(Stale::of(&meta));
    }
    Err(JournalRefusal::Write(WriteError::Exists))
}

/// Every file `--apply` writes, by exact pattern: today only IRQ affinity.
pub fn is_writable_target(path: &str) -> bool {
    let Some(irq) = path
        .strip_prefix("proc/irq/")
        .and_then(|rest| rest.strip_suffix("/smp_affinity_list"))
    else {
        return false;
    };
    !irq.is_empty()
        && irq.len() <= MAX_IRQ_DIGITS
        && irq.bytes().all(|b| b.is_ascii_digit())
        && (irq == "0" || !irq.starts_with('0'))
}

fn validate_cpu_list(value: &str) -> Result<(), JournalError> {
    if value.len() > MAX_VALUE_BYTES {
        return Err(JournalError::CpuListTooLong { bytes: value.len() });
    }
    match IdList::parse(value) {
        Ok(list) if !list.is_empty() => Ok(()),
        _ => Err(JournalError::NotCpuList {
            value: numasleuth_kernel::error::quote(value),
        }),
    }
}

fn validate_file_changes(changes: &[FileChange]) -> Result<(), JournalError> {
    if changes.is_empty() || changes.len() > MAX_FILE_CHANGES {
        return Err(JournalError::ChangeCount { count: changes.len() });
    }
    let mut seen = std::collections::BTreeSet::new();
    for change in changes {
        if !is_writable_target(&change.path) {
            return Err(JournalError::NotWritable {
                path: numasleuth_kernel::error::quote(&change.path),
            });
        }
        if !seen.insert(change.path.as_str()) {
            return Err(JournalError::NamedTwice {
                path: change.path.clone(),
            });
        }
        validate_cpu_list(&change.before)?;
        validate_cpu_list(&change.after)?;
    }
    Ok(())
}

fn validate_page_moves(moves: &[PageMove]) -> Result<(), JournalError> {
    let Some(first) = moves.first() else {
        return Err(JournalError::NoPages);
    };
    if moves.len() > MAX_PAGE_RUNS {
        return Err(JournalError::TooManyRuns { runs: moves.len() });
    }
    let mut total_pages: u64 = 0;
    for m in moves {
        if (m.pid, m.pid_start_time) != (first.pid, first.pid_start_time) {
            return Err(JournalError::ManyProcesses);
        }
        if m.pid == 0 || m.pid > MAX_PID {
            return Err(JournalError::ImpossiblePid { pid: m.pid });
        }
        if m.from_node >= MAX_NODE || m.to_node >= MAX_NODE {
            return Err(JournalError::ImpossibleNode {
                node: m.from_node.max(m.to_node),
            });
        }
        if !m.page_bytes.is_power_of_two() || !(4096..=1 << 30).contains(&m.page_bytes) {
            return Err(JournalError::ImpossiblePageSize { bytes: m.page_bytes });
        }
        let end = m
            .pages
            .checked_mul(m.page_bytes)
            .and_then(|bytes| m.address.checked_add(bytes));
        if m.pages == 0 || m.address % m.page_bytes != 0 || end.is_none_or(|end| end > USER_ADDRESS_LIMIT) {
            return Err(JournalError::NotUserRun {
                pages: m.pages,
                address: m.address,
            });
        }
        total_pages = total_pages.saturating_add(m.pages);
    }
    if total_pages > MAX_JOURNAL_PAGES {
        return Err(JournalError::TooManyPages { pages: total_pages });
    }
    Ok(())
}

#[cfg(test)]
#[path = "journal_tests.rs"]
mod tests;
