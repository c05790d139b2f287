//! The one way numasleuth replaces a file whole: `-o FILE` reports, man
//! pages, `serve --textfile` and the DAMON claim file all go through
//! [`write_atomic`], so every one of them has the same crash behaviour.
//!
//! A fresh temporary file is made in the target's own directory (so the
//! rename never crosses a file system), written, flushed to disk, renamed
//! over the target, and then the directory is flushed too, so after a
//! crash the target is the old file or the whole new one, never empty.
//! The temporary file is created with `O_EXCL` (or linked with `linkat`)
//! under a random name, so a planted file or symlink is never followed; on
//! any failure, and on any signal that ends the process, it is removed.
//!
//! [`place_new`] is the same door for output too big to hold in memory
//! (a snapshot's archive or tree): the caller stages it beside the target,
//! and it is moved into place only if nothing is there, and durably.

use std::ffi::CString;
use std::fs::{File, Permissions};
use std::io::{self, Write};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use crate::cleanup::{self, Registered};

/// Writes `bytes` to `path` atomically. `mode` is the new file's
/// permission bits before the umask (0o666 for an ordinary output file).
/// The temporary name starts with `.` and ends in `.tmp`, so collectors
/// that pick files by suffix (node_exporter's `*.prom`) never read it.
///
/// Where the file system allows (`O_TMPFILE`: ext4, xfs, btrfs, tmpfs) the
/// content is written to a file without a name, which no signal, not even
/// SIGKILL, can leave behind; it gets its temporary name only for the
/// moment between linking and renaming. Elsewhere the named temporary file
/// is registered with [`cleanup`], so a signal that ends the process
/// removes it.
pub fn write_atomic(path: &Path, bytes: &[u8], mode: u32) -> io::Result<()> {
    let name = path
        .file_name()
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "no file name"))?;
    let dir = parent_dir(path);
    let prefix = format!(".{}.", name.to_string_lossy());
    match unnamed_in(dir, mode) {
        Some(file) => write_unnamed(file, dir, &prefix, path, bytes)?,
        None => write_named(dir, &prefix, path, bytes, mode)?,
    }
    sync_dir(dir)
}

/// The directory that holds `path` (`.` for a bare name).
fn parent_dir(path: &Path) -> &Path {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    }
}

/// A rename is durable only once its directory is. Some file systems
/// refuse fsync on a directory (EINVAL): the file is in place, which is
/// what the caller asked, so that refusal is not an error.
fn sync_dir(dir: &Path) -> io::Result<()> {
    match File::open(dir)?.sync_all() {
        Err(e) if e.raw_os_error() == Some(libc::EINVAL) => Ok(()),
        other => other,
    }
}

/// Moves `staged`, a finished file or directory whose contents the caller
/// has already flushed, to `target` on the same file system, and flushes
/// `target`'s directory. Nothing already at `target` (a file, a directory,
/// even a link to nothing) is ever replaced: that is an error of kind
/// `AlreadyExists` (EEXIST), decided by the kernel at the moment of the
/// move, so no other process can slip a file in between a check and the
/// move. On an error `staged` is left where it was, for the caller to
/// remove.
pub fn place_new(staged: &Path, target: &Path) -> io::Result<()> {
    match rename_noreplace(staged, target) {
        // Older kernels (ENOSYS) and some file systems (EINVAL: NFS, most
        // FUSE) have no RENAME_NOREPLACE; the fallback keeps the promise.
        Err(e) if matches!(e.raw_os_error(), Some(libc::EINVAL | libc::ENOSYS)) => {
            place_new_without_flag(staged, target)?
        }
        other => other?,
    }
    sync_dir(parent_dir(target))
}

fn rename_noreplace(from: &Path, to: &Path) -> io::Result<()> {
    let c = |p: &Path| {
        CString::new(p.as_os_str().as_bytes())
            .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "NUL in the path"))
    };
    let (from, to) = (c(from)?, c(to)?);
    // The raw system call, not glibc's wrapper, which only glibc 2.28 and
    // later have. SAFETY: both strings are NUL-terminated and alive for
    // the call; the arguments are the ones renameat2(2) takes.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_renameat2,
            libc::AT_FDCWD,
            from.as_ptr(),
            libc::AT_FDCWD,
            to.as_ptr(),
            libc::RENAME_NOREPLACE,
        )
    };
    if rc == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// [`place_new`] without RENAME_NOREPLACE. A file is hard-linked, which
/// never replaces anything, then its staged name removed. For a
/// directory, `mkdir` claims the name (it fails on anything there) and the
/// rename then replaces only that empty directory; if another process
/// filled it meanwhile, the rename fails (ENOTEMPTY) rather than mix the
/// two.
fn place_new_without_flag(staged: &Path, target: &Path) -> io::Result<()> {
    if !std::fs::symlink_metadata(staged)?.is_dir() {
        std::fs::hard_link(staged, target)?;
        return std::fs::remove_file(staged);
    }
    std::fs::create_dir(target)?;
    std::fs::rename(staged, target).inspect_err(|_| {
        // Ours and empty, or not ours to remove (remove_dir fails then).
        let _ = std::fs::remove_dir(target);
    })
}

/// A file without a name in `dir`, or `None` where the file system (or
/// kernel) has no `O_TMPFILE`.
fn unnamed_in(dir: &Path, mode: u32) -> Option<File> {
    // The name is given through /proc/self/fd; without /proc, no O_TMPFILE.
    if !Path::new("/proc/self/fd").is_dir() {
        return None;
    }
    let dir = CString::new(dir.as_os_str().as_bytes()).ok()?;
    let flags = libc::O_TMPFILE | libc::O_WRONLY | libc::O_CLOEXEC;
    // SAFETY: dir is a NUL-terminated string alive for the call; the mode
    // argument is what O_TMPFILE expects.
    let fd = unsafe { libc::open(dir.as_ptr(), flags, mode as libc::c_uint) };
    // SAFETY: fd was just returned by open and is owned by no one else.
    (fd >= 0).then(|| File::from(unsafe { OwnedFd::from_raw_fd(fd) }))
}

fn write_unnamed(mut file: File, dir: &Path, prefix: &str, path: &Path, bytes: &[u8]) -> io::Result<()> {
    file.write_all(bytes)?;
    file.sync_all()?;
    let proc_link = CString::new(format!("/proc/self/fd/{}", file.as_raw_fd())).expect("no NUL in a number");
    // Registered before it has the name, so no signal finds it unlisted.
    for attempt in 0u32.. {
        let temporary = dir.join(format!("{prefix}{:08x}.tmp", random_tag(attempt)));
        let registered = Registered::new(&temporary);
        let c_temporary = CString::new(temporary.as_os_str().as_bytes())
            .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "NUL in the path"))?;
        // SAFETY: both strings are NUL-terminated and alive for the call.
        let rc = unsafe {
            libc::linkat(
                libc::AT_FDCWD,
                proc_link.as_ptr(),
                libc::AT_FDCWD,
                c_temporary.as_ptr(),
                libc::AT_SYMLINK_FOLLOW,
            )
        };
        if rc != 0 {
            let error = io::Error::last_os_error();
            if error.kind() == io::ErrorKind::AlreadyExists && attempt < 16 {
                continue;
            }
            return Err(error);
        }
        return rename_or_remove(&temporary, path, registered);
    }
    unreachable!("the loop returns")
}

fn rename_or_remove(temporary: &Path, path: &Path, registered: Registered) -> io::Result<()> {
    let renamed = std::fs::rename(temporary, path);
    if renamed.is_err() {
        let _ = std::fs::remove_file(temporary);
    }
    drop(registered);
    renamed
}

/// A tag unlikely to be taken: the temporary name is made with `linkat`,
/// which never follows or replaces what is there, so a clash only costs a
/// retry.
fn random_tag(attempt: u32) -> u32 {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    nanos ^ std::process::id().rotate_left(16) ^ attempt.wrapping_mul(0x9e37_79b9)
}

fn write_named(dir: &Path, prefix: &str, path: &Path, bytes: &[u8], mode: u32) -> io::Result<()> {
    cleanup::install();
    let mut temporary = tempfile::Builder::new()
        .prefix(prefix)
        .suffix(".tmp")
        .permissions(Permissions::from_mode(mode))
        .tempfile_in(dir)?;
    let registered = Registered::new(temporary.path());
    temporary.write_all(bytes)?;
    temporary.as_file().sync_all()?;
    let named: PathBuf = temporary.into_temp_path().keep().map_err(|e| e.error)?;
    rename_or_remove(&named, path, registered)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::MetadataExt;

    use crate::test_support::dir_names as names;

    #[test]
    fn a_write_replaces_the_file_whole_and_leaves_nothing_beside_it() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("r.json");
        std::fs::write(&target, "a much longer old content").unwrap();
        write_atomic(&target, b"new", 0o666).unwrap();
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "new");
        assert_eq!(names(dir.path()), ["r.json"]);
    }

    #[test]
    fn a_failed_rename_removes_the_temporary_file() {
        let dir = tempfile::tempdir().unwrap();
        // A non-empty directory cannot be replaced by a file: the
        // temporary file is written, the rename fails, and it must go.
        let target = dir.path().join("taken.json");
        std::fs::create_dir(&target).unwrap();
        std::fs::write(target.join("inside"), "x").unwrap();
        assert!(write_atomic(&target, b"{}", 0o666).is_err());
        assert_eq!(names(dir.path()), ["taken.json"]);
    }

    #[test]
    fn the_mode_is_applied_through_the_umask() {
        let dir = tempfile::tempdir().unwrap();
        let private = dir.path().join("claim.json");
        write_atomic(&private, b"{}", 0o600).unwrap();
        assert_eq!(std::fs::metadata(&private).unwrap().mode() & 0o777, 0o600);
        let shared = dir.path().join("numasleuth.prom");
        write_atomic(&shared, b"x 1\n", 0o644).unwrap();
        // Group and others may lose bits to the umask, never gain them,
        // and the owner keeps read and write.
        let mode = std::fs::metadata(&shared).unwrap().mode() & 0o777;
        assert_eq!(mode & !0o644, 0, "{mode:o}");
        assert_eq!(mode & 0o600, 0o600, "{mode:o}");
    }

    #[test]
    fn a_symlink_at_the_target_is_replaced_not_followed() {
        let dir = tempfile::tempdir().unwrap();
        let elsewhere = dir.path().join("elsewhere");
        std::fs::write(&elsewhere, "keep").unwrap();
        let target = dir.path().join("out.txt");
        std::os::unix::fs::symlink(&elsewhere, &target).unwrap();
        write_atomic(&target, b"new", 0o666).unwrap();
        assert_eq!(std::fs::read_to_string(&elsewhere).unwrap(), "keep");
        assert!(!std::fs::symlink_metadata(&target).unwrap().file_type().is_symlink());
    }

    #[test]
    fn place_new_moves_a_file_or_a_tree_into_an_empty_name() {
        let dir = tempfile::tempdir().unwrap();
        let staged = dir.path().join("staged");
        std::fs::write(&staged, "whole").unwrap();
        place_new(&staged, &dir.path().join("out.tar.gz")).unwrap();
        let tree = dir.path().join("tree");
        std::fs::create_dir_all(tree.join("sys")).unwrap();
        place_new(&tree, &dir.path().join("snap")).unwrap();
        assert!(dir.path().join("snap/sys").is_dir());
        assert_eq!(names(dir.path()), ["out.tar.gz", "snap"]);
    }

    #[test]
    fn place_new_replaces_nothing_not_even_a_dangling_link() {
        let dir = tempfile::tempdir().unwrap();
        let staged = dir.path().join("staged");
        std::fs::write(&staged, "new").unwrap();
        let file = dir.path().join("file");
        std::fs::write(&file, "old").unwrap();
        let link = dir.path().join("link");
        std::os::unix::fs::symlink("nowhere", &link).unwrap();
        let empty = dir.path().join("empty");
        std::fs::create_dir(&empty).unwrap();
        for taken in [&file, &link, &empty] {
            let error = place_new(&staged, taken).unwrap_err();
            assert_eq!(error.kind(), io::ErrorKind::AlreadyExists, "{taken:?}: {error}");
        }
        assert_eq!(std::fs::read_to_string(&file).unwrap(), "old");
        assert_eq!(std::fs::read_to_string(&staged).unwrap(), "new");
    }

    #[test]
    fn the_fallback_replaces_nothing_either() {
        let dir = tempfile::tempdir().unwrap();
        let staged = dir.path().join("staged");
        std::fs::create_dir(&staged).unwrap();
        let taken = dir.path().join("taken");
        std::fs::create_dir(&taken).unwrap();
        assert!(place_new_without_flag(&staged, &taken).is_err());
        let file = dir.path().join("file");
        std::fs::write(&file, "x").unwrap();
        assert!(place_new_without_flag(&file, &taken).is_err());
        place_new_without_flag(&staged, &dir.path().join("free")).unwrap();
        place_new_without_flag(&file, &dir.path().join("free.tgz")).unwrap();
        assert_eq!(names(dir.path()), ["free", "free.tgz", "taken"]);
    }

    #[test]
    fn a_path_without_a_file_name_is_an_error() {
        assert!(write_atomic(Path::new("/"), b"x", 0o666).is_err());
        assert!(write_atomic(Path::new("dir/.."), b"x", 0o666).is_err());
    }
}
