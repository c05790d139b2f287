//! Snapshots: the kernel files a run read, written out as a tree or a
//! `.tar.gz`, and opened again as a [`Root`].
//!
//! A snapshot is made by running the readers against a recording root, so
//! it holds exactly what numasleuth reads — never more, and never a file
//! such as `/proc/slabinfo` that takes allocator locks, because no reader
//! asks for one. Opening it replays those reads offline.
//!
//! The archive format itself (gzip, tar, safe extraction, the caps) is the
//! `numasleuth-archive` crate; this module is what a snapshot means: a
//! [`Root`] to open, a [`Recording`] to write, the manifest, and the
//! temporary directory's life.

use std::fs;
use std::io;
use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};

/// The archive's caps and names, at the paths other crates use.
pub use numasleuth_archive::{is_archive_name, limits};
use numasleuth_archive::{Archive, Caps, WriteError};

pub mod manifest;
mod unpacked;

pub(crate) use self::unpacked::Unpacked;
use crate::atomic_write;
use crate::cleanup;
use crate::error::{escape, ReadError};
use crate::root::{Recording, Root};
use crate::untrusted;

pub const MANIFEST: &str = "numasleuth-snapshot.json";

/// Placed in directories a snapshot holds empty (a device directory a link
/// points at), because git drops empty directories and a fixture checked in
/// must still resolve. [`Root::list`] never shows it.
pub const KEEP: &str = ".numasleuth-keep";

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SnapshotSummary {
    pub files: usize,
    pub symlinks: usize,
    pub bytes: u64,
}

fn io_error(path: &Path, error: io::Error) -> ReadError {
    ReadError::from_io_at(path.display().to_string(), &error)
}

/// Every archive problem starts the same way, so a user (and a script)
/// can tell "this is not a snapshot" from a missing file.
const NOT_ARCHIVE: &str = "not a directory or a readable .tar.gz snapshot";

fn archive_error(path: &Path, error: numasleuth_archive::Error) -> ReadError {
    match error {
        numasleuth_archive::Error::Refused(problem) => ReadError::Io {
            errno: None,
            path: escape(&path.display().to_string()),
            message: format!("{NOT_ARCHIVE}: {problem}"),
        },
        numasleuth_archive::Error::Io(error) => io_error(path, error),
    }
}

/// Opens a directory or a `.tar.gz` snapshot as a root. Errors name the
/// path as given, never the temporary directory.
pub fn open(path: &Path) -> Result<Root, ReadError> {
    open_in(path, None, Caps::REAL)
}

/// [`open`], unpacking under `tmp_parent` instead of the system's
/// temporary directory (tests watch what happens there).
pub(crate) fn open_in(path: &Path, tmp_parent: Option<&Path>, caps: Caps) -> Result<Root, ReadError> {
    let meta = fs::metadata(path).map_err(|e| io_error(path, e))?;
    if meta.is_dir() {
        let root = Root::directory(path)?;
        require_machine(path, path)?;
        return Ok(root);
    }
    let (file, meta) = untrusted::open_regular(path, true).map_err(|e| ReadError::Io {
        errno: None,
        path: escape(&path.display().to_string()),
        message: format!("{e} ({NOT_ARCHIVE})"),
    })?;
    let mut archive = Archive::new(file, meta.len(), caps).map_err(|p| archive_error(path, p.into()))?;
    // First pass: checked whole without writing, so a bad or hostile
    // archive costs no disk; the second pass checks it all again as it
    // writes, in case the file changed in between.
    archive
        .check(&cleanup::interrupted)
        .map_err(|e| archive_error(path, e))?;
    // Signals are taken before the directory exists, and one that arrives
    // now waits for `busy` (the unpack stops at its next entry), so no
    // moment of the directory is left to a signal that would leave it.
    cleanup::install();
    let busy = cleanup::busy();
    let mut builder = tempfile::Builder::new();
    builder.prefix("numasleuth-root-");
    let dir = match tmp_parent {
        Some(parent) => builder.tempdir_in(parent),
        None => builder.tempdir(),
    }
    .map_err(|e| io_error(path, e))?;
    // Registered before the first entry, so an interrupt mid-unpack cleans up.
    let dir = Unpacked::new(dir);
    archive
        .unpack_into(dir.path(), &cleanup::interrupted)
        .map_err(|e| archive_error(path, e))?;
    drop(busy);
    let base = snapshot_base(dir.path()).map_err(|e| io_error(path, e))?;
    require_machine(path, &base)?;
    Ok(Root::unpacked(dir, base))
}

/// A root must look like a machine: without `proc/` or `sys/` every reader
/// finds nothing, and an empty or unrelated tree would read as "1 node,
/// 0 CPUs" instead of as the mistake it is. (hwloc's captures of some
/// machines hold only `sys/`, so one of the two is enough.)
fn require_machine(shown: &Path, base: &Path) -> Result<(), ReadError> {
    let is_dir = |name: &str| fs::symlink_metadata(base.join(name)).is_ok_and(|m| m.is_dir());
    if is_dir("proc") || is_dir("sys") {
        return Ok(());
    }
    Err(ReadError::Io {
        errno: None,
        path: escape(&shown.display().to_string()),
        message: "not a numasleuth snapshot or root: it has no proc/ or sys/".into(),
    })
}

/// Archives made by others (hwloc's test captures) wrap the tree in one
/// top-level folder; ours do not. Accept both.
fn snapshot_base(dir: &Path) -> io::Result<PathBuf> {
    let names: Vec<_> = fs::read_dir(dir)?.take(3).collect::<Result<_, _>>()?;
    let has_tree = names.iter().any(|e| e.file_name() == "proc" || e.file_name() == "sys");
    match names.as_slice() {
        [single] if !has_tree && single.file_type()?.is_dir() => Ok(single.path()),
        _ => Ok(dir.to_path_buf()),
    }
}

/// Writes what a recording root saw to `out`: a `.tar.gz` when the name
/// says so, otherwise a new directory. The tree is built in a temporary
/// directory first, so a failure leaves nothing half-written at `out`, and
/// an existing `out` is never replaced.
pub fn write(recording: &Recording, manifest_json: &str, out: &Path) -> Result<SnapshotSummary, ReadError> {
    write_within(recording, manifest_json, out, Caps::REAL)
}

/// [`write`], refusing archives over `caps` (tests use small ones).
pub(crate) fn write_within(
    recording: &Recording,
    manifest_json: &str,
    out: &Path,
    caps: Caps,
) -> Result<SnapshotSummary, ReadError> {
    // Only to fail before the work: the move at the end is what refuses,
    // atomically, a file that appears meanwhile.
    if out.symlink_metadata().is_ok() {
        return Err(already_exists(out));
    }
    let parent = match out.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let staging = tempfile::Builder::new()
        .prefix(".numasleuth-snapshot-")
        .tempdir_in(&parent)
        .map_err(|e| io_error(&parent, e))?;
    let tree = staging.path().join("tree");
    let summary = build_tree(recording, manifest_json, &tree).map_err(|e| io_error(&tree, e))?;
    if is_archive_name(out) {
        let partial = staging.path().join("snapshot.tar.gz");
        numasleuth_archive::write_tree(&tree, &partial, caps).map_err(|e| match e {
            WriteError::Tree(e) => io_error(&tree, e),
            too_big @ WriteError::TooBig { .. } => ReadError::Io {
                errno: None,
                path: escape(&out.display().to_string()),
                message: too_big.to_string(),
            },
            WriteError::Write(e) => io_error(out, e),
        })?;
        place(&partial, out)?;
    } else {
        sync_tree(&tree).map_err(|e| io_error(&tree, e))?;
        place(&tree, out)?;
    }
    Ok(summary)
}

fn already_exists(out: &Path) -> ReadError {
    ReadError::Io {
        errno: None,
        path: out.display().to_string(),
        message: "already exists; refusing to overwrite".into(),
    }
}

/// Moves the finished snapshot to `out` through the one writer that
/// never replaces: a snapshot is there whole, or not at all.
fn place(staged: &Path, out: &Path) -> Result<(), ReadError> {
    atomic_write::place_new(staged, out).map_err(|e| match e.raw_os_error() {
        // ENOTEMPTY: the fallback's claimed directory was filled by another.
        Some(libc::EEXIST | libc::ENOTEMPTY) => already_exists(out),
        _ => io_error(out, e),
    })
}

/// Flushes every file and directory under `dir`, so the tree is on disk
/// before its name appears: after a crash `out` is the whole snapshot or
/// absent, never a tree of empty files.
fn sync_tree(dir: &Path) -> io::Result<()> {
    for entry in fs::read_dir(dir)? {
        let entry = entry?;
        let kind = entry.file_type()?;
        if kind.is_dir() {
            sync_tree(&entry.path())?;
        } else if kind.is_file() {
            fs::File::open(entry.path())?.sync_all()?;
        }
    }
    fs::File::open(dir)?.sync_all()
}

fn build_tree(recording: &Recording, manifest_json: &str, tree: &Path) -> io::Result<SnapshotSummary> {
    fs::create_dir_all(tree)?;
    for dir in recording.dirs.keys() {
        fs::create_dir_all(tree.join(dir))?;
    }
    let mut bytes = 0u64;
    for (path, contents) in &recording.files {
        let target = tree.join(path);
        if let Some(parent) = target.parent() {
            fs::create_dir_all(parent)?;
        }
        fs::write(&target, contents)?;
        bytes += contents.len() as u64;
    }
    for (path, link_target) in &recording.symlinks {
        let at = tree.join(path);
        if let Some(parent) = at.parent() {
            fs::create_dir_all(parent)?;
        }
        if at.symlink_metadata().is_err() {
            symlink(link_target, &at)?;
        }
    }
    for dir in recording.dirs.keys() {
        let at = tree.join(dir);
        if at.is_dir() && fs::read_dir(&at)?.next().is_none() {
            fs::write(at.join(KEEP), "")?;
        }
    }
    fs::write(tree.join(MANIFEST), manifest_json)?;
    Ok(SnapshotSummary {
        files: recording.files.len(),
        symlinks: recording.symlinks.len(),
        bytes,
    })
}

#[cfg(test)]
mod hostile_tests;
#[cfg(test)]
mod tests;
