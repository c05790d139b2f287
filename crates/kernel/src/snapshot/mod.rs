//! Snapshots: the kernel files a run read, written out as a tree or a
//! `.tar.gz`, and opened again as a [`Root`].
//!
//! A snapshot is made by running the readers against a recording root, so
//! it holds exactly what numasleuth reads — never more, and never a file
//! such as `/proc/slabinfo` that takes allocator locks, because no reader
//! asks for one. Opening it replays those reads offline.

use std::fs;
use std::io::{self, Seek};
use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};

mod extract;
mod gzip;
pub mod limits;
pub mod manifest;
mod unpacked;
mod untar;

use self::extract::{EntryPath, Extractor};
use self::gzip::Gzip;
use self::limits::{Caps, MAX_ARCHIVE_FILE_BYTES};
pub(crate) use self::unpacked::Unpacked;
use self::untar::{Kind, Problem, TarReader};
use crate::atomic_write;
use crate::cleanup;
use crate::error::{escape, ReadError};
use crate::root::{Recording, Root};
use crate::untrusted::{self, format_cap};

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

fn archive_error(path: &Path, problem: Problem) -> ReadError {
    ReadError::Io {
        errno: None,
        path: escape(&path.display().to_string()),
        message: format!("{NOT_ARCHIVE}: {}", problem.0),
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
    if meta.len() > MAX_ARCHIVE_FILE_BYTES {
        return Err(archive_error(
            path,
            Problem(format!(
                "it is larger than {}; no snapshot is that big",
                format_cap(MAX_ARCHIVE_FILE_BYTES)
            )),
        ));
    }
    // First pass: the whole archive is checked (gzip CRCs, every cap, every
    // path) without writing anything, so a bad or hostile archive costs no
    // disk and no inodes; the second pass checks it all again as it writes,
    // in case the file changed in between.
    let scan = file.try_clone().map_err(|e| io_error(path, e))?;
    let gzip = Gzip::open(scan, meta.len(), caps.stream_bytes).map_err(|p| archive_error(path, p))?;
    unpack(gzip, None, caps).map_err(|p| archive_error(path, p))?;
    let mut file = file;
    file.rewind().map_err(|e| io_error(path, e))?;
    let gzip = Gzip::open(file, meta.len(), caps.stream_bytes).map_err(|p| archive_error(path, p))?;
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
    let mut extractor = Extractor::new(dir.path()).map_err(|e| io_error(path, e))?;
    unpack(gzip, Some(&mut extractor), caps).map_err(|p| archive_error(path, p))?;
    drop(busy);
    let base = snapshot_base(dir.path()).map_err(|e| io_error(path, e))?;
    require_machine(path, &base)?;
    Ok(Root::unpacked(dir, base))
}

/// Reads every entry within the caps in [`limits`], writing each through
/// `extractor`, or with none only checking them.
fn unpack(gzip: Gzip, mut extractor: Option<&mut Extractor>, caps: Caps) -> Result<(), Problem> {
    let mut archive = TarReader::new(gzip);
    let (mut entries, mut unpacked_bytes) = (0usize, 0u64);
    while let Some(entry) = archive.next_entry()? {
        if cleanup::interrupted() {
            return Err(Problem("interrupted".into()));
        }
        entries += 1;
        if entries > caps.entries {
            return Err(Problem(format!("it holds more than {} entries", caps.entries)));
        }
        unpacked_bytes += limits::disk_bytes(entry.kind, entry.size, entry.link.len());
        if unpacked_bytes > caps.unpacked_bytes {
            return Err(Problem(format!(
                "it unpacks to more than {}",
                format_cap(caps.unpacked_bytes)
            )));
        }
        let Some(at) = EntryPath::check(&entry.path)? else {
            continue; // `./`, the top directory itself.
        };
        let Some(extractor) = extractor.as_deref_mut() else {
            if entry.kind == Kind::Symlink {
                extract::check_link_target(&at, &entry.link)?;
            }
            continue;
        };
        match entry.kind {
            Kind::Dir => extractor.dir(&at)?,
            Kind::Symlink => extractor.symlink(&at, &entry.link)?,
            Kind::File => {
                let mut file = extractor.file(&at)?;
                archive.copy_data(entry.size, &mut file)?;
            }
        }
    }
    archive.into_inner().finish()
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
        // An archive `open` would refuse is no use; say so now, while the
        // user can still write a directory instead.
        let (entries, bytes) = count_tree(&tree).map_err(|e| io_error(&tree, e))?;
        if entries > caps.entries || bytes > caps.unpacked_bytes {
            return Err(ReadError::Io {
                errno: None,
                path: escape(&out.display().to_string()),
                message: format!(
                    "this snapshot holds {entries} entries and {bytes} bytes, more than a .tar.gz \
                     snapshot may ({} entries, {}); write a directory instead",
                    caps.entries,
                    format_cap(caps.unpacked_bytes)
                ),
            });
        }
        let partial = staging.path().join("snapshot.tar.gz");
        write_archive(&tree, &partial).map_err(|e| io_error(out, e))?;
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

/// Entries (files, directories, links) and file bytes under `dir`, links
/// not followed: what an archive of it would hold.
fn count_tree(dir: &Path) -> io::Result<(usize, u64)> {
    let (mut entries, mut bytes) = (0, 0);
    for entry in fs::read_dir(dir)? {
        let entry = entry?;
        let meta = entry.path().symlink_metadata()?;
        entries += 1;
        if meta.is_dir() {
            let (e, b) = count_tree(&entry.path())?;
            entries += e;
            bytes += b;
        } else if meta.is_file() {
            bytes += meta.len();
        }
    }
    Ok((entries, bytes))
}

pub fn is_archive_name(path: &Path) -> bool {
    let name = path.to_string_lossy();
    name.ends_with(".tar.gz") || name.ends_with(".tgz")
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

fn write_archive(tree: &Path, out: &Path) -> io::Result<()> {
    // Read too: the header CRC is computed from the header written.
    let file = fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create_new(true)
        .open(out)?;
    let encoder = gzip::GzipWriter::new(file)?;
    let mut builder = tar::Builder::new(encoder);
    // Keep sysfs links as links: readers resolve them inside the root.
    builder.follow_symlinks(false);
    builder.append_dir_all(".", tree)?;
    builder.into_inner()?.finish()?.sync_all()
}

#[cfg(test)]
mod hostile_gzip_tests;
#[cfg(test)]
mod hostile_tests;
#[cfg(test)]
mod prop_tests;
#[cfg(test)]
mod test_archive;
#[cfg(test)]
mod tests;
