//! Why a journal or its key is refused, as types: `undo` refuses hostile
//! input for many distinct reasons, and callers and tests tell them apart
//! by variant, not by the wording.
//!
//! No variant names its inner error as a `source`: each message already
//! says it, and a source would print it twice in an error chain.

use std::io;
use std::path::PathBuf;

use thiserror::Error;

use crate::journal::{KILLED_BEFORE_CHANGE, KIND_IRQ, MAX_FILE_CHANGES, MAX_JOURNAL_PAGES, MAX_PAGE_RUNS, SCHEMA};
use crate::seal::KEY_BYTES;

/// What a journal's content breaks of [`crate::Journal::validate`]'s rules,
/// or why it is not a journal at all. Text taken from the file is quoted.
#[derive(Debug, Error)]
pub enum JournalError {
    #[error("unknown journal schema `{schema}` (expected {SCHEMA})", SCHEMA = SCHEMA)]
    UnknownSchema { schema: String },
    #[error("it does not record the {what}, so it cannot be tied to this machine and boot")]
    NoIdentity { what: &'static str },
    #[error("a `{kind}` journal with entries of the other kind")]
    MixedKinds { kind: String },
    #[error("kind `{kind}` is not one numasleuth makes ({KIND_IRQ}, {pages})", KIND_IRQ = KIND_IRQ, pages = crate::pages::KIND)]
    UnknownKind { kind: String },
    #[error(
        "{KILLED_BEFORE_CHANGE}: the journal is {remains}, and every --apply syncs its whole journal \
         before the first change, so nothing was changed under it and there is nothing to undo \
         (rerun the --apply with the same --journal, or remove it)",
        KILLED_BEFORE_CHANGE = KILLED_BEFORE_CHANGE
    )]
    RecordsNothing { remains: Remains },
    #[error("corrupt journal (not a numasleuth journal): {0}")]
    NotJson(serde_json::Error),
    #[error("a CPU list of {bytes} bytes")]
    CpuListTooLong { bytes: usize },
    #[error("`{value}` is not a CPU list")]
    NotCpuList { value: String },
    #[error("it records {count} changes (1 to {MAX_FILE_CHANGES} expected)", MAX_FILE_CHANGES = MAX_FILE_CHANGES)]
    ChangeCount { count: usize },
    #[error("it names /{path}, which is not a file numasleuth ever writes (only /proc/irq/N/smp_affinity_list)")]
    NotWritable { path: String },
    #[error("it names /{path} twice")]
    NamedTwice { path: String },
    #[error("a page journal that moves no page")]
    NoPages,
    #[error("{runs} page runs, more than {MAX_PAGE_RUNS}", MAX_PAGE_RUNS = MAX_PAGE_RUNS)]
    TooManyRuns { runs: usize },
    #[error("it names more than one process; a page journal belongs to one")]
    ManyProcesses,
    #[error("PID {pid} is not a possible PID")]
    ImpossiblePid { pid: u32 },
    #[error("node {node} is beyond any kernel's nodes")]
    ImpossibleNode { node: u32 },
    #[error("page size {bytes} is not a page size")]
    ImpossiblePageSize { bytes: u64 },
    #[error("{pages} page(s) at {address:#x} are not a page-aligned run in user space")]
    NotUserRun { pages: u64, address: u64 },
    #[error("it claims {pages} pages, more than the {MAX_JOURNAL_PAGES} a move may journal", MAX_JOURNAL_PAGES = MAX_JOURNAL_PAGES)]
    TooManyPages { pages: u64 },
}

/// What an `--apply` killed while writing a journal in place left.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Remains {
    Empty,
    CutOff { bytes: usize },
}

impl std::fmt::Display for Remains {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Remains::Empty => f.write_str("empty"),
            Remains::CutOff { bytes } => write!(f, "cut off after {bytes} bytes"),
        }
    }
}

/// A directory `crate::trust` checks: the journal's own, or one above it.
/// Paths are escaped for the terminal.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Place {
    Own { dir: String },
    Above { dir: String, below: String },
}

impl Place {
    /// What whoever controls the directory could do to the journal.
    fn could(&self) -> &'static str {
        match self {
            Place::Own { .. } => "replace the journal",
            Place::Above { .. } => "swap the journal's directory",
        }
    }
}

impl std::fmt::Display for Place {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Place::Own { dir } => write!(f, "its directory {dir}"),
            Place::Above { dir, below } => write!(f, "{dir}, above its directory {below},"),
        }
    }
}

/// Why a journal file, or its directory, cannot be trusted (`crate::trust`).
#[derive(Debug, Error)]
pub enum TrustError {
    /// A link, FIFO, directory, or a file that cannot be opened.
    #[error("{0}")]
    Open(io::Error),
    #[error(
        "the journal belongs to uid {uid}, not to the user running undo (uid {euid}); refusing a journal someone \
         else wrote"
    )]
    NotOurs { uid: u32, euid: u32 },
    #[error("the journal has mode {mode:o}: group or others could have edited it")]
    Editable { mode: u32 },
    #[error("{0} (no journal numasleuth writes is that large)")]
    Read(io::Error),
    #[error("corrupt journal: not UTF-8 text")]
    NotUtf8,
    #[error("{place}: {error}")]
    Unreadable { place: Place, error: io::Error },
    #[error("{dir} is not a directory")]
    NotADirectory { dir: String },
    #[error("{place} (mode {mode:o}) lets group or others {}", .place.could())]
    OpenToOthers { place: Place, mode: u32 },
    #[error(
        "{place} belongs to uid {uid}, who could {}{}",
        .place.could(),
        sticky_note(.sticky)
    )]
    Foreign { place: Place, uid: u32, sticky: bool },
}

fn sticky_note(sticky: &bool) -> &'static str {
    if *sticky {
        " (the owner of a sticky directory may rename any entry in it)"
    } else {
        ""
    }
}

/// Why [`crate::journal_file::write_whole`] did not put a journal in place.
#[derive(Debug, Error)]
pub enum WriteError {
    #[error("cannot create {}: {error}", .temp.display())]
    CreateTemporary { temp: PathBuf, error: io::Error },
    #[error("{0}")]
    Io(io::Error),
    #[error("the empty journal there changed while it was being replaced; refusing")]
    StaleChanged,
    #[error("already exists; refusing to replace it: it may be the only record of an earlier change")]
    Exists,
    #[error("cannot remove the temporary {}: {error}", .temp.display())]
    RemoveTemporary { temp: PathBuf, error: io::Error },
}

/// Why a journal at a path is refused, or could not be saved: the `why`
/// of [`crate::ChangeError::Journal`].
#[derive(Debug, Error)]
pub enum JournalRefusal {
    #[error("{0}")]
    Content(JournalError),
    #[error("{0}")]
    Untrusted(TrustError),
    #[error("refusing to write it: {0}")]
    WouldRefuse(JournalError),
    #[error("refusing to write it: {0}")]
    UnsafeDirectory(TrustError),
    #[error("already exists, and it is not a journal that may be replaced: {0}")]
    NotReplaceable(TrustError),
    #[error("{0}")]
    Write(WriteError),
    #[error("{0}")]
    Encode(serde_json::Error),
    #[error(
        "its seal does not verify with this user's journal key: it was edited, or written by another user or \
         machine"
    )]
    SealMismatch,
    #[error("not a page-move journal, or it moves no page")]
    NotPageMoves,
    #[error("page {address:#x} is not in the journal; refusing to move it")]
    PageNotJournalled { address: u64 },
    #[error("a page-move journal has no file changes; undo it with `undo_any`")]
    NoFileChanges,
}

/// The thing [`KeyError`] found wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum KeyPart {
    Directory(PathBuf),
    Key,
}

impl std::fmt::Display for KeyPart {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            KeyPart::Directory(dir) => write!(f, "directory {}", dir.display()),
            KeyPart::Key => f.write_str("the key"),
        }
    }
}

/// Why the journal key cannot be read or made: the `why` of
/// [`crate::ChangeError::Key`].
#[derive(Debug, Error)]
pub enum KeyError {
    #[error("path contains a NUL byte")]
    NulInPath,
    #[error("cannot create {}: {error}", .path.display())]
    CreateDirectory { path: PathBuf, error: io::Error },
    #[error("cannot open {} (a symlink is refused): {error}", .path.display())]
    OpenDirectory { path: PathBuf, error: io::Error },
    #[error("{0}")]
    Io(io::Error),
    #[error("{what} belongs to uid {uid}, not to us (uid {euid})")]
    NotOurs { what: KeyPart, uid: u32, euid: u32 },
    #[error("{what} has mode {mode:o}: group or others can reach it")]
    Reachable { what: KeyPart, mode: u32 },
    #[error("not a regular file")]
    NotAFile,
    #[error("cannot read the key: {0}")]
    Read(io::Error),
    #[error("not a numasleuth key: longer than {KEY_BYTES} bytes", KEY_BYTES = KEY_BYTES)]
    TooLong,
    #[error("cannot create the key: {0}")]
    Create(io::Error),
    #[error("the key appeared and vanished while it was being created")]
    Vanished,
    #[error("HOME is not set: nowhere to keep the journal key")]
    NoHome,
}
