//! Writing a journal so that it appears whole or not at all.
//!
//! A journal is written before the first change, and a kill can come at any
//! moment. Written in place, a kill mid-write left an empty or cut-off file
//! that `undo` called corrupt and that blocked a rerun with the same
//! `--journal`. So the text goes to a temporary name beside it (`O_EXCL`,
//! `O_NOFOLLOW`, mode 0600), is synced, and is then hard-linked to its name
//! (`linkat` never replaces a file, so a journal that records a change is
//! never overwritten), and the directory is synced. A reader sees no file or
//! the whole journal; a kill can leave at most a stray temporary file,
//! which no later step reads.
//!
//! **A file that records nothing may be replaced.** An empty or cut-off
//! journal can only come from an `--apply` killed while writing it (by an
//! older numasleuth, which wrote in place), and every numasleuth syncs the
//! whole journal before its first change: so such a file proves that its run
//! changed nothing. A rerun with the same `--journal` replaces it, but only
//! after the same checks `undo` makes (our own private regular file in a
//! directory only we or root control), and only if it is still the very
//! file checked (same inode and size) just before it is unlinked. Anything
//! that parses as a journal, or is malformed otherwise, is never replaced.
//!
//! Every step goes through [`JournalFs`], so the tests can stop the write
//! after any step, as a kill would, and check what is left.

use std::ffi::OsString;
use std::fs;
use std::io::Write;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use crate::error::WriteError;

/// The file operations a journal write makes, one call per step.
pub trait JournalFs {
    /// Creates `path` new (never following a link), mode 0600.
    fn create(&mut self, path: &Path) -> std::io::Result<fs::File>;
    fn write(&mut self, file: &mut fs::File, bytes: &[u8]) -> std::io::Result<()>;
    fn sync(&mut self, file: &fs::File) -> std::io::Result<()>;
    /// Gives `from` the name `to`; fails if `to` exists.
    fn link(&mut self, from: &Path, to: &Path) -> std::io::Result<()>;
    fn unlink(&mut self, path: &Path) -> std::io::Result<()>;
    fn sync_dir(&mut self, dir: &Path) -> std::io::Result<()>;
}

/// The real file system.
pub struct RealFs;

impl JournalFs for RealFs {
    fn create(&mut self, path: &Path) -> std::io::Result<fs::File> {
        fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
            .open(path)
    }
    fn write(&mut self, file: &mut fs::File, bytes: &[u8]) -> std::io::Result<()> {
        file.write_all(bytes)
    }
    fn sync(&mut self, file: &fs::File) -> std::io::Result<()> {
        file.sync_all()
    }
    fn link(&mut self, from: &Path, to: &Path) -> std::io::Result<()> {
        // linkat(2) with no flags: `from` itself is linked, never followed.
        fs::hard_link(from, to)
    }
    fn unlink(&mut self, path: &Path) -> std::io::Result<()> {
        fs::remove_file(path)
    }
    fn sync_dir(&mut self, dir: &Path) -> std::io::Result<()> {
        fs::File::open(dir)?.sync_all()
    }
}

/// The directory a journal path lives in.
pub(crate) fn parent_dir(path: &Path) -> &Path {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    }
}

/// A temporary name beside `path`, hidden and unlikely to collide; `O_EXCL`
/// makes a collision (or a planted file or link) an error, never a write
/// through it.
fn temporary_name(path: &Path) -> PathBuf {
    let mut name = OsString::from(".");
    name.push(path.file_name().unwrap_or_default());
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    name.push(format!(".{}.{nanos:08x}.numasleuth-tmp", std::process::id()));
    parent_dir(path).join(name)
}

/// An existing file at the journal's path that records no change and may
/// be replaced: its inode and size when it was checked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stale {
    dev: u64,
    ino: u64,
    bytes: u64,
}

impl Stale {
    pub(crate) fn of(meta: &fs::Metadata) -> Self {
        Stale {
            dev: meta.dev(),
            ino: meta.ino(),
            bytes: meta.len(),
        }
    }

    /// Still the file that was checked: a same-user race that put a real
    /// journal there in between is refused, not unlinked.
    fn unchanged(&self, path: &Path) -> bool {
        fs::symlink_metadata(path).is_ok_and(|m| m.is_file() && Stale::of(&m) == *self)
    }
}

/// Writes `text` to `path` as described in the module docs. `stale` is the
/// file already at `path` that [`crate::journal::Journal::save`] found to
/// record nothing. On an error the temporary file is removed (a kill
/// cannot do that, and leaves it; nothing reads it).
pub fn write_whole(
    fs_ops: &mut dyn JournalFs,
    path: &Path,
    text: &[u8],
    stale: Option<Stale>,
) -> Result<(), WriteError> {
    let temp = temporary_name(path);
    let mut file = fs_ops.create(&temp).map_err(|error| WriteError::CreateTemporary {
        temp: temp.clone(),
        error,
    })?;
    let placed = (|| {
        fs_ops.write(&mut file, text).map_err(WriteError::Io)?;
        fs_ops.sync(&file).map_err(WriteError::Io)?;
        if let Some(stale) = stale {
            if !stale.unchanged(path) {
                return Err(WriteError::StaleChanged);
            }
            fs_ops.unlink(path).map_err(WriteError::Io)?;
        }
        fs_ops.link(&temp, path).map_err(|e| match e.kind() {
            std::io::ErrorKind::AlreadyExists => WriteError::Exists,
            _ => WriteError::Io(e),
        })
    })();
    let removed = fs_ops.unlink(&temp);
    placed?;
    removed.map_err(|error| WriteError::RemoveTemporary { temp, error })?;
    fs_ops.sync_dir(parent_dir(path)).map_err(WriteError::Io)
}

#[cfg(test)]
#[path = "journal_file_tests.rs"]
mod tests;
