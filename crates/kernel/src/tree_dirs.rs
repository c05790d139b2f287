//! Reading a tree root (a fixture, an unpacked snapshot, `--root DIR`)
//! through descriptors of its directories.
//!
//! Why: every file of a tree was found by absolute path, twice (an `lstat`
//! to keep devices and links out, then the `open`), and on hwloc's 128-CPU
//! capture those path walks were two thirds of `topo`'s time. A sysfs
//! directory's files are read together, so each directory is opened once
//! (`openat2` beneath the tree's root, refusing any link, since the
//! directory path was already resolved inside the root) and its files are
//! checked and opened relative to it: one component walked per call. A
//! directory met while resolving a path is opened beneath its parent
//! (`O_NOFOLLOW`) instead, which also says it is no link, and directories
//! are opened readable so `Root::list` can list them from the descriptor.
//!
//! The checks are those of [`crate::untrusted::open_regular`]: the name must
//! be a regular file before it is opened (a device is never opened), is
//! opened without following a link and without blocking, and must still be
//! a regular file once open. A name that is a link is left to the caller,
//! which resolves it by hand inside the root.

use std::collections::HashMap;
use std::ffi::CString;
use std::fs::File;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

/// Directory descriptors kept open at once; when full they are all
/// closed. 64 covers the directories one reader works through together.
const MAX_OPEN_DIRS: usize = 64;

#[derive(Debug, Default)]
pub(crate) struct TreeDirs {
    root: Option<Dir>,
    dirs: HashMap<String, Dir>,
    /// This kernel has no `openat2`: callers take the path-based way.
    unavailable: bool,
    /// This process's effective user, asked once: every directory opened
    /// is compared with it.
    euid: Option<libc::uid_t>,
    /// `getdents64`'s buffer, reused by every listing.
    dirent_buffer: Vec<u8>,
}

/// An open directory of the tree.
#[derive(Debug)]
struct Dir {
    fd: OwnedFd,
    /// Only this user or root can rename or replace its entries (it belongs
    /// to one of them and neither group nor others may write it), so a
    /// file checked by name cannot be swapped before it is opened, and the
    /// `fstat` after the open can be skipped.
    private: bool,
    /// Opened for reading (not `O_PATH`), so it can be listed.
    readable: bool,
    /// Listed before: the next listing seeks back to the start first.
    listed: bool,
}

impl TreeDirs {
    /// Wraps a directory just opened, noting whether it is private.
    fn adopt(&mut self, (fd, readable): (OwnedFd, bool)) -> io::Result<Dir> {
        // SAFETY: stat is plain integers, for which zero is valid.
        let mut stat: libc::stat = unsafe { std::mem::zeroed() };
        // SAFETY: a valid descriptor and a stat to fill.
        if unsafe { libc::fstat(fd.as_raw_fd(), &mut stat) } != 0 {
            return Err(io::Error::last_os_error());
        }
        let euid = *self.euid.get_or_insert_with(crate::identity::euid);
        let private = (stat.st_uid == euid || stat.st_uid == 0) && stat.st_mode & 0o022 == 0;
        Ok(Dir {
            fd,
            private,
            readable,
            listed: false,
        })
    }

    /// Keeps `opened` as the descriptor of `dir`, within [`MAX_OPEN_DIRS`].
    fn keep(&mut self, dir: String, opened: Dir) -> (RawFd, bool) {
        if self.dirs.len() >= MAX_OPEN_DIRS {
            self.dirs.clear();
        }
        let found = (opened.fd.as_raw_fd(), opened.private);
        self.dirs.insert(dir, opened);
        found
    }
}

impl TreeDirs {
    /// Whether `name` in the link-free directory `dir` is a symlink; `None`
    /// when descriptors cannot be used here.
    pub(crate) fn is_link(&mut self, base: &Path, dir: &str, name: &str) -> Option<io::Result<bool>> {
        if self.unavailable || name.contains('/') {
            return None;
        }
        let child = join(dir, name);
        if self.dirs.contains_key(&child) {
            // Opened without following a link, so it is none.
            return Some(Ok(false));
        }
        let (dir_fd, _) = match self.dir(base, dir)? {
            Ok(opened) => opened,
            Err(e) => return Some(Err(e)),
        };
        let c_name = match c_path(name.as_bytes()) {
            Ok(c) => c,
            Err(e) => return Some(Err(e)),
        };
        // A directory, the usual answer, is opened at once (never through a
        // link), which both answers and saves opening it from the root when
        // its files are read. Anything else is told by its lstat.
        if name != "." && name != ".." {
            match open_dir_at(dir_fd, &c_name, libc::O_NOFOLLOW).and_then(|fd| self.adopt(fd)) {
                Ok(opened) => {
                    self.keep(child, opened);
                    return Some(Ok(false));
                }
                Err(e) if e.kind() == io::ErrorKind::NotFound => return Some(Err(e)),
                Err(_) => {}
            }
        }
        Some(fstatat(dir_fd, &c_name, libc::AT_SYMLINK_NOFOLLOW).map(|stat| kind(&stat) == libc::S_IFLNK))
    }

    /// The names in the link-free directory `dir`, read from its
    /// descriptor, without `skip`, stopping past `cap` names; `None` when
    /// descriptors cannot be used here (or this one cannot be listed).
    pub(crate) fn list(&mut self, base: &Path, dir: &str, skip: &str, cap: usize) -> Option<io::Result<Vec<String>>> {
        if self.unavailable {
            return None;
        }
        if let Err(e) = self.dir(base, dir)? {
            return Some(Err(e));
        }
        let open = if dir.is_empty() {
            self.root.as_mut()?
        } else {
            self.dirs.get_mut(dir)?
        };
        if !open.readable {
            return None;
        }
        let fd = open.fd.as_raw_fd();
        // SAFETY: a valid descriptor; seeking a directory restarts it.
        if open.listed && unsafe { libc::lseek(fd, 0, libc::SEEK_SET) } != 0 {
            return Some(Err(io::Error::last_os_error()));
        }
        open.listed = true;
        Some(crate::tree_list::names(fd, skip, cap, &mut self.dirent_buffer))
    }

    /// Opens the regular file `name` of the link-free directory `dir` (both
    /// relative to `base`). `None` when `name` is a symlink, or when
    /// descriptors cannot be used here: the caller then takes its own path.
    pub(crate) fn open_file(&mut self, base: &Path, dir: &str, name: &str) -> Option<io::Result<(File, u64)>> {
        if self.unavailable || name == ".." || name == "." || name.contains('/') {
            return None;
        }
        let (dir_fd, private) = match self.dir(base, dir)? {
            Ok(opened) => opened,
            Err(e) => return Some(Err(e)),
        };
        let c_name = match c_path(name.as_bytes()) {
            Ok(c) => c,
            Err(e) => return Some(Err(e)),
        };
        let before = match fstatat(dir_fd, &c_name, libc::AT_SYMLINK_NOFOLLOW) {
            Ok(stat) => stat,
            Err(e) => return Some(Err(e)),
        };
        if kind(&before) == libc::S_IFLNK {
            return None;
        }
        Some(open_checked(dir_fd, &c_name, &before, private))
    }

    /// The descriptor of directory `dir`, opened on first use, and whether
    /// it is private (see [`Dir`]).
    fn dir(&mut self, base: &Path, dir: &str) -> Option<io::Result<(RawFd, bool)>> {
        if self.root.is_none() {
            match open_root(base).and_then(|fd| self.adopt(fd)) {
                Ok(root) => self.root = Some(root),
                Err(e) => return Some(Err(e)),
            }
        }
        let root = self.root.as_ref()?;
        if dir.is_empty() {
            return Some(Ok((root.fd.as_raw_fd(), root.private)));
        }
        if let Some(open) = self.dirs.get(dir) {
            return Some(Ok((open.fd.as_raw_fd(), open.private)));
        }
        let opened = match open_beneath(root.fd.as_raw_fd(), dir).and_then(|fd| self.adopt(fd)) {
            Ok(opened) => opened,
            Err(e) if e.raw_os_error() == Some(libc::ENOSYS) => {
                self.unavailable = true;
                return None;
            }
            Err(e) => return Some(Err(e)),
        };
        Some(Ok(self.keep(dir.to_string(), opened)))
    }
}

fn c_path(path: &[u8]) -> io::Result<CString> {
    CString::new(path).map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "path holds a NUL byte"))
}

fn owned(fd: libc::c_long) -> io::Result<OwnedFd> {
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: the kernel just returned this descriptor, owned by no one else.
    Ok(unsafe { OwnedFd::from_raw_fd(fd as RawFd) })
}

/// Flags of a directory opened for reading. `O_DIRECTORY` fails on
/// anything else before it is opened, so no device is ever opened here.
const DIR_FLAGS: libc::c_int = libc::O_RDONLY | libc::O_DIRECTORY | libc::O_NONBLOCK | libc::O_CLOEXEC;

/// Opens a directory readable (so it can be listed), or only as a path
/// when it may be searched but not read (mode `--x`): its files can still
/// be opened. Returns the descriptor and whether it is readable.
fn readable_or_path(open: impl Fn(libc::c_int) -> io::Result<OwnedFd>) -> io::Result<(OwnedFd, bool)> {
    match open(DIR_FLAGS) {
        Ok(fd) => Ok((fd, true)),
        Err(e) if e.kind() == io::ErrorKind::PermissionDenied => {
            open(libc::O_PATH | libc::O_DIRECTORY | libc::O_CLOEXEC).map(|fd| (fd, false))
        }
        Err(e) => Err(e),
    }
}

fn open_root(base: &Path) -> io::Result<(OwnedFd, bool)> {
    let path = c_path(base.as_os_str().as_bytes())?;
    readable_or_path(|flags| {
        // SAFETY: a NUL-terminated path alive for the call.
        owned(unsafe { libc::open(path.as_ptr(), flags) }.into())
    })
}

/// The directory `name` (one component) of `dir`; `extra` may add
/// `O_NOFOLLOW`, which makes a link fail (ENOTDIR, ELOOP).
fn open_dir_at(dir: RawFd, name: &CString, extra: libc::c_int) -> io::Result<(OwnedFd, bool)> {
    readable_or_path(|flags| {
        // SAFETY: a valid descriptor and a NUL-terminated name.
        owned(unsafe { libc::openat(dir, name.as_ptr(), flags | extra) }.into())
    })
}

/// `dir` below `root` with no link anywhere on the way (it was resolved
/// already, so a link there now was swapped in) and never above `root`.
/// ENOSYS when this kernel (or a seccomp filter) refuses `openat2`.
fn open_beneath(root: RawFd, dir: &str) -> io::Result<(OwnedFd, bool)> {
    let path = c_path(dir.as_bytes())?;
    readable_or_path(|flags| {
        // SAFETY: open_how is plain integers, for which zero is valid.
        let mut how: libc::open_how = unsafe { std::mem::zeroed() };
        how.flags = flags as u64;
        how.resolve = libc::RESOLVE_IN_ROOT | libc::RESOLVE_NO_SYMLINKS | libc::RESOLVE_NO_MAGICLINKS;
        let fd = crate::live_open::openat2(root, &path, &how);
        match owned(fd) {
            Err(e) if matches!(e.raw_os_error(), Some(libc::EPERM | libc::E2BIG)) => {
                Err(io::Error::from_raw_os_error(libc::ENOSYS))
            }
            other => other,
        }
    })
}

/// `dir/name`, or `name` at the top.
fn join(dir: &str, name: &str) -> String {
    if dir.is_empty() {
        name.to_string()
    } else {
        format!("{dir}/{name}")
    }
}

fn fstatat(dir: RawFd, name: &CString, flags: libc::c_int) -> io::Result<libc::stat> {
    // SAFETY: stat is plain integers, for which zero is valid.
    let mut stat: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: a valid descriptor, a NUL-terminated name and a stat to fill.
    if unsafe { libc::fstatat(dir, name.as_ptr(), &mut stat, flags) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(stat)
}

fn kind(stat: &libc::stat) -> libc::mode_t {
    stat.st_mode & libc::S_IFMT
}

fn not_regular(stat: &libc::stat) -> io::Error {
    let what = match kind(stat) {
        libc::S_IFIFO => "a FIFO",
        libc::S_IFSOCK => "a socket",
        libc::S_IFCHR => "a character device",
        libc::S_IFBLK => "a block device",
        libc::S_IFDIR => "a directory",
        libc::S_IFLNK => "a symbolic link",
        _ => "not a file",
    };
    io::Error::new(io::ErrorKind::InvalidInput, format!("is {what}, not a regular file"))
}

/// Opens `name` in `dir` after `before` said it is a regular file, and
/// checks the open file is one too unless `dir` is private (nobody else
/// could have swapped it meanwhile). Returns the file and its size.
fn open_checked(dir: RawFd, name: &CString, before: &libc::stat, private: bool) -> io::Result<(File, u64)> {
    if kind(before) != libc::S_IFREG {
        return Err(not_regular(before));
    }
    let flags = libc::O_RDONLY | libc::O_NONBLOCK | libc::O_CLOEXEC | libc::O_NOCTTY | libc::O_NOFOLLOW;
    // SAFETY: a valid descriptor and a NUL-terminated name.
    let fd = owned(unsafe { libc::openat(dir, name.as_ptr(), flags) }.into())?;
    let file = File::from(fd);
    if private {
        return Ok((file, before.st_size as u64));
    }
    let meta = file.metadata()?;
    if !meta.is_file() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!(
                "is {}, not a regular file",
                crate::untrusted::kind_name(meta.file_type())
            ),
        ));
    }
    Ok((file, meta.len()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tree() -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("sys/a")).unwrap();
        std::fs::write(dir.path().join("sys/a/file"), "1\n").unwrap();
        std::os::unix::fs::symlink("file", dir.path().join("sys/a/link")).unwrap();
        std::os::unix::fs::symlink("/etc", dir.path().join("sys/out")).unwrap();
        crate::untrusted::mkfifo(&dir.path().join("sys/a/fifo"));
        dir
    }

    #[test]
    fn opens_regular_files_and_leaves_links_to_the_caller() {
        let dir = tree();
        let mut dirs = TreeDirs::default();
        let (file, _) = dirs.open_file(dir.path(), "sys/a", "file").unwrap().unwrap();
        assert!(file.metadata().unwrap().is_file());
        assert!(dirs.open_file(dir.path(), "sys/a", "link").is_none());
        let missing = dirs.open_file(dir.path(), "sys/a", "absent").unwrap().unwrap_err();
        assert_eq!(missing.kind(), io::ErrorKind::NotFound);
    }

    #[test]
    fn refuses_a_fifo_without_blocking_and_a_directory_that_is_a_link() {
        let dir = tree();
        let mut dirs = TreeDirs::default();
        let fifo = dirs.open_file(dir.path(), "sys/a", "fifo").unwrap().unwrap_err();
        assert!(fifo.to_string().contains("a FIFO"), "{fifo}");
        // `sys/out` is a link: a directory path given here never holds one.
        let link = dirs.open_file(dir.path(), "sys/out", "hostname").unwrap().unwrap_err();
        assert_eq!(link.raw_os_error(), Some(libc::ELOOP), "{link}");
    }

    #[test]
    fn never_leaves_the_root() {
        let dir = tree();
        let mut dirs = TreeDirs::default();
        // RESOLVE_IN_ROOT turns `..` at the top into the root itself.
        let escaped = dirs
            .open_file(dir.path(), "../../../../etc", "hostname")
            .unwrap()
            .unwrap_err();
        assert_eq!(escaped.kind(), io::ErrorKind::NotFound, "{escaped}");
    }

    #[test]
    fn tells_links_from_directories_and_lists_a_directory_twice() {
        let dir = tree();
        std::os::unix::fs::symlink("a", dir.path().join("sys/to_a")).unwrap();
        let mut dirs = TreeDirs::default();
        assert!(!dirs.is_link(dir.path(), "sys", "a").unwrap().unwrap());
        assert!(dirs.is_link(dir.path(), "sys", "to_a").unwrap().unwrap());
        assert!(dirs.is_link(dir.path(), "sys/a", "link").unwrap().unwrap());
        let absent = dirs.is_link(dir.path(), "sys", "absent").unwrap().unwrap_err();
        assert_eq!(absent.kind(), io::ErrorKind::NotFound);
        for _ in 0..2 {
            let mut names = dirs.list(dir.path(), "sys/a", "", 100).unwrap().unwrap();
            names.sort();
            assert_eq!(names, ["fifo", "file", "link"]);
        }
    }

    #[test]
    fn the_descriptor_cache_stays_bounded() {
        let dir = tree();
        for i in 0..(MAX_OPEN_DIRS + 10) {
            let sub = dir.path().join(format!("d{i}"));
            std::fs::create_dir(&sub).unwrap();
            std::fs::write(sub.join("f"), "x").unwrap();
        }
        let mut dirs = TreeDirs::default();
        for i in 0..(MAX_OPEN_DIRS + 10) {
            dirs.open_file(dir.path(), &format!("d{i}"), "f").unwrap().unwrap();
            assert!(dirs.dirs.len() <= MAX_OPEN_DIRS);
        }
    }
}
