//! Writing a report to a path the user named (`-o FILE`), the way a shell
//! redirection would, but whole or not at all where that is possible.
//!
//! - No file there, or a regular file: replaced atomically
//!   ([`write_atomic`]); a reader never sees half a report.
//! - A character device (`/dev/null`, a terminal) or a FIFO: written into,
//!   as `>` would. Replacing it would turn `/dev/null` into a regular file
//!   for every other program on the machine.
//! - A symbolic link (`/dev/stdout`, `latest.json -> runs/7.json`): its
//!   target is written by the two rules above, as `>` and `cp` do; the link
//!   stays a link. Only a link owned by us or by root is followed (the rule
//!   of the kernel's `protected_symlinks`), so root's `-o /tmp/r.json`
//!   never writes through a link another user planted there; a link to
//!   nothing is refused, as creating a file at some other path is not what
//!   the user asked.
//! - A directory, block device or socket: refused, with the reason.

use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::os::unix::fs::{FileTypeExt, MetadataExt, OpenOptionsExt};
use std::path::Path;

use crate::atomic_write::write_atomic;

/// Writes `bytes` to the user-named `path` by the rules above; `mode` is a
/// new file's permission bits before the umask.
pub fn write_output(path: &Path, bytes: &[u8], mode: u32) -> io::Result<()> {
    let meta = match std::fs::symlink_metadata(path) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => return write_atomic(path, bytes, mode),
        other => other?,
    };
    if meta.file_type().is_symlink() {
        return write_through_link(path, &meta, bytes, mode);
    }
    write_to_kind(path, &meta, bytes, mode, libc::O_NOFOLLOW)
}

fn write_through_link(path: &Path, link: &std::fs::Metadata, bytes: &[u8], mode: u32) -> io::Result<()> {
    let euid = crate::identity::euid();
    if link.uid() != euid && link.uid() != 0 {
        return Err(refused(format!(
            "a symbolic link owned by user {}; not followed (name its target instead)",
            link.uid()
        )));
    }
    let target = match std::fs::metadata(path) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            return Err(refused("a symbolic link to nothing; name the file to make".into()))
        }
        other => other?,
    };
    if target.is_file() {
        // Replace the target itself, atomically, where it really lives.
        return write_atomic(&std::fs::canonicalize(path)?, bytes, mode);
    }
    // A device or FIFO reached through the link (/dev/stdout).
    write_to_kind(path, &target, bytes, mode, 0)
}

fn write_to_kind(path: &Path, meta: &std::fs::Metadata, bytes: &[u8], mode: u32, nofollow: i32) -> io::Result<()> {
    let kind = meta.file_type();
    if kind.is_file() {
        return write_atomic(path, bytes, mode);
    }
    if kind.is_char_device() || kind.is_fifo() {
        return write_stream(path, bytes, nofollow);
    }
    Err(refused(
        match () {
            _ if kind.is_dir() => "a directory; give a file name",
            _ if kind.is_block_device() => "a block device; a report is not written to a disk",
            _ => "a socket or other special file; give a file name",
        }
        .into(),
    ))
}

/// Writes into a device or FIFO without creating, truncating or replacing
/// anything; a FIFO waits for its reader as with `>`.
fn write_stream(path: &Path, bytes: &[u8], nofollow: i32) -> io::Result<()> {
    let mut file: File = OpenOptions::new()
        .write(true)
        .custom_flags(nofollow | libc::O_NOCTTY)
        .open(path)?;
    // What was opened is still a stream: a file swapped in since the check
    // would be written in place, not whole.
    let opened = file.metadata()?.file_type();
    if !(opened.is_char_device() || opened.is_fifo()) {
        return Err(refused("changed while it was being opened".into()));
    }
    file.write_all(bytes)?;
    file.flush()
}

/// Keeps a report that could not be written where asked (a full or
/// read-only disk) so a long measurement is not lost: a new file in the
/// temporary directory, readable by its owner only (a report names
/// processes and addresses), whose path is returned for the error.
pub fn save_fallback(asked: &Path, bytes: &[u8]) -> io::Result<std::path::PathBuf> {
    let name = asked.file_name().map(|n| n.to_string_lossy().into_owned());
    let mut file = tempfile::Builder::new()
        .prefix("numasleuth-")
        .suffix(&format!("-{}", name.as_deref().unwrap_or("report")))
        .permissions(std::os::unix::fs::PermissionsExt::from_mode(0o600))
        .tempfile()?;
    file.write_all(bytes)?;
    file.as_file().sync_all()?;
    file.keep().map(|(_, path)| path).map_err(|e| e.error)
}

fn refused(why: String) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidInput, why)
}

#[cfg(test)]
#[path = "output_file_tests.rs"]
mod tests;
