//! Writing a directory tree as a `.tar.gz` that reading accepts: within
//! the caps, links kept as links, and through [`GzipWriter`] so every byte
//! is checked when it is read back.

use std::fs;
use std::io;
use std::path::Path;

use numasleuth_parse::read::format_cap;

use crate::gzip::GzipWriter;
use crate::limits::Caps;

/// Writing an archive failed.
#[derive(Debug, thiserror::Error)]
pub enum WriteError {
    /// The tree could not be walked to count what it holds.
    #[error(transparent)]
    Tree(io::Error),
    /// Reading would refuse it; a directory has no such caps.
    #[error(
        "this snapshot holds {entries} entries and {bytes} bytes, more than a .tar.gz snapshot may \
         ({} entries, {}); write a directory instead",
        caps.entries,
        format_cap(caps.unpacked_bytes)
    )]
    TooBig { entries: usize, bytes: u64, caps: Caps },
    /// Writing the archive file failed.
    #[error(transparent)]
    Write(io::Error),
}

/// Whether a name asks for an archive rather than a directory.
pub fn is_archive_name(path: &Path) -> bool {
    let name = path.to_string_lossy();
    name.ends_with(".tar.gz") || name.ends_with(".tgz")
}

/// Writes everything under `tree` to the new file `out` (never replacing
/// one), synced to disk, or refuses a tree over `caps` before writing: an
/// archive reading would refuse is no use, and the user can still write a
/// directory instead.
pub fn write_tree(tree: &Path, out: &Path, caps: Caps) -> Result<(), WriteError> {
    let (entries, bytes) = count_tree(tree).map_err(WriteError::Tree)?;
    if entries > caps.entries || bytes > caps.unpacked_bytes {
        return Err(WriteError::TooBig { entries, bytes, caps });
    }
    write_archive(tree, out).map_err(WriteError::Write)
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

fn write_archive(tree: &Path, out: &Path) -> io::Result<()> {
    // Read too: the header CRC is computed from the header written.
    let file = fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create_new(true)
        .open(out)?;
    let encoder = GzipWriter::new(file)?;
    let mut builder = tar::Builder::new(encoder);
    // Keep sysfs links as links: readers resolve them inside the root.
    builder.follow_symlinks(false);
    builder.append_dir_all(".", tree)?;
    builder.into_inner()?.finish()?.sync_all()
}
