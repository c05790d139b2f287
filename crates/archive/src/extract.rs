//! Writing archive entries into the temporary directory, and nowhere else.
//!
//! Paths are checked as data first: relative, no `..`, at most
//! [`MAX_PATH_COMPONENTS`] deep and [`MAX_PATH_BYTES`] long. Then every
//! directory on the way is opened with `openat(O_NOFOLLOW | O_DIRECTORY)`
//! from the one above, and the entry is made with `*at` calls on that
//! descriptor, so the kernel itself refuses to pass through a symbolic link
//! an earlier entry made (`link -> /etc`, then `link/passwd`) or to write
//! through one (`f -> /etc/passwd`, then `f`). Links themselves are kept:
//! snapshots need them, and kernel's `Root` resolves them inside the root.
//!
//! The descriptors of the last entry's directories are kept, so an entry in
//! the same directory as the one before costs no lookups and any entry
//! costs O(its depth): extraction is linear in the archive, unlike
//! `tar::Entry::unpack_in`, which canonicalises every parent every time.
//!
//! Modes and owners in the archive are ignored: everything is made 0755 or
//! 0644, so a read-only directory cannot stop the temporary directory from
//! being removed.

use std::ffi::CString;
use std::fs::File;
use std::io;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, FromRawFd, OwnedFd};
use std::path::Path;

use numasleuth_parse::error::quote;

use crate::error::Problem;
use crate::limits::{MAX_PATH_BYTES, MAX_PATH_COMPONENTS};

/// A checked relative path, split into components.
pub(crate) struct EntryPath {
    pub components: Vec<Vec<u8>>,
}

impl EntryPath {
    /// `Ok(None)` for the archive's own top directory (`./`).
    pub fn check(raw: &[u8]) -> Result<Option<EntryPath>, Problem> {
        let shown = || quote(&String::from_utf8_lossy(raw));
        if raw.len() > MAX_PATH_BYTES {
            return Err(Problem(format!(
                "a path of {} bytes (the limit is {MAX_PATH_BYTES})",
                raw.len()
            )));
        }
        if raw.starts_with(b"/") {
            return Err(Problem(format!("`{}` is an absolute path", shown())));
        }
        if raw.contains(&0) {
            return Err(Problem(format!("`{}` holds a NUL byte", shown())));
        }
        let mut components = Vec::new();
        for part in raw.split(|b| *b == b'/') {
            match part {
                b"" | b"." => continue,
                b".." => return Err(Problem(format!("`{}` climbs out with `..`", shown()))),
                _ => {}
            }
            if components.len() == MAX_PATH_COMPONENTS {
                return Err(Problem(format!(
                    "`{}` is more than {MAX_PATH_COMPONENTS} directories deep",
                    shown()
                )));
            }
            components.push(part.to_vec());
        }
        Ok((!components.is_empty()).then_some(EntryPath { components }))
    }

    pub fn shown(&self) -> String {
        quote(&String::from_utf8_lossy(&self.components.join(&b'/')))
    }
}

/// A link's target is kept as written (it may be absolute or climb with
/// `..`: kernel's `Root` resolves it inside the root), but it must be a
/// path the kernel would store.
pub(crate) fn check_link_target(path: &EntryPath, target: &[u8]) -> Result<(), Problem> {
    if target.len() > MAX_PATH_BYTES || target.is_empty() || target.contains(&0) {
        return Err(Problem(format!(
            "`{}` links to an empty, NUL-holding or over-long target",
            path.shown()
        )));
    }
    Ok(())
}

pub(crate) struct Extractor {
    top: OwnedFd,
    /// Open directories of the last entry's parent, outermost first.
    chain: Vec<(Vec<u8>, OwnedFd)>,
}

fn c_name(name: &[u8]) -> CString {
    // EntryPath::check refused NUL bytes, so this cannot fail.
    CString::new(name).expect("NUL refused by EntryPath::check")
}

fn last_error<T>(rc: libc::c_int, ok: T) -> io::Result<T> {
    if rc < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(ok)
    }
}

fn open_dir_at(parent: BorrowedFd<'_>, name: &[u8]) -> io::Result<OwnedFd> {
    let name = c_name(name);
    let flags = libc::O_RDONLY | libc::O_DIRECTORY | libc::O_NOFOLLOW | libc::O_CLOEXEC;
    // SAFETY: parent is an open descriptor and name a NUL-terminated string,
    // both alive for the call; a non-negative result is a new descriptor we
    // own from here on.
    let fd = unsafe { libc::openat(parent.as_raw_fd(), name.as_ptr(), flags) };
    // SAFETY: fd was just returned by openat and is owned by no one else.
    last_error(fd, ()).map(|()| unsafe { OwnedFd::from_raw_fd(fd) })
}

fn mkdir_at(parent: BorrowedFd<'_>, name: &[u8]) -> io::Result<()> {
    let name = c_name(name);
    // SAFETY: as in open_dir_at; mkdirat does not keep the pointer.
    let rc = unsafe { libc::mkdirat(parent.as_raw_fd(), name.as_ptr(), 0o755) };
    last_error(rc, ())
}

impl Extractor {
    pub fn new(top: &Path) -> io::Result<Self> {
        let top = File::open(top)?.into();
        Ok(Extractor { top, chain: Vec::new() })
    }

    /// The directory that holds `path`, made where missing; never reached
    /// through a symbolic link.
    fn parent_of(&mut self, path: &EntryPath) -> Result<BorrowedFd<'_>, Problem> {
        let parents = &path.components[..path.components.len() - 1];
        let common = self
            .chain
            .iter()
            .zip(parents)
            .take_while(|((held, _), wanted)| held == *wanted)
            .count();
        self.chain.truncate(common);
        for name in &parents[common..] {
            let parent = self.chain.last().map_or(self.top.as_fd(), |(_, fd)| fd.as_fd());
            match mkdir_at(parent, name) {
                Ok(()) => {}
                Err(e) if e.raw_os_error() == Some(libc::EEXIST) => {}
                Err(e) => return Err(Problem(format!("cannot unpack `{}`: {e}", path.shown()))),
            }
            let fd = open_dir_at(parent, name).map_err(|e| match e.raw_os_error() {
                Some(libc::ELOOP | libc::ENOTDIR) => Problem(format!(
                    "`{}` goes through a symbolic link or file an earlier entry made",
                    path.shown()
                )),
                _ => Problem(format!("cannot unpack `{}`: {e}", path.shown())),
            })?;
            self.chain.push((name.clone(), fd));
        }
        Ok(self.chain.last().map_or(self.top.as_fd(), |(_, fd)| fd.as_fd()))
    }

    pub fn dir(&mut self, path: &EntryPath) -> Result<(), Problem> {
        let name = path.components.last().expect("checked paths are not empty").clone();
        let parent = self.parent_of(path)?;
        match mkdir_at(parent, &name) {
            Ok(()) => Ok(()),
            // Listed twice, or made earlier as a parent: fine if it is a
            // real directory.
            Err(e) if e.raw_os_error() == Some(libc::EEXIST) => open_dir_at(parent, &name)
                .map(drop)
                .map_err(|_| Problem(format!("`{}` is both a directory and not", path.shown()))),
            Err(e) => Err(Problem(format!("cannot unpack `{}`: {e}", path.shown()))),
        }
    }

    /// A regular file to fill. A later entry of the same name replaces an
    /// earlier file, as with `tar`; it never writes through a link.
    pub fn file(&mut self, path: &EntryPath) -> Result<File, Problem> {
        let name = c_name(path.components.last().expect("checked paths are not empty"));
        let parent = self.parent_of(path)?;
        let flags = libc::O_WRONLY | libc::O_CREAT | libc::O_TRUNC | libc::O_NOFOLLOW | libc::O_CLOEXEC;
        // SAFETY: parent is an open descriptor and name a NUL-terminated
        // string, both alive for the call; the mode argument is what
        // O_CREAT expects.
        let fd = unsafe { libc::openat(parent.as_raw_fd(), name.as_ptr(), flags, 0o644 as libc::c_uint) };
        let opened = last_error(fd, ()).map_err(|e| match e.raw_os_error() {
            Some(libc::ELOOP) => Problem(format!(
                "`{}` would write through a symbolic link an earlier entry made",
                path.shown()
            )),
            Some(libc::EISDIR) => Problem(format!("`{}` is both a directory and a file", path.shown())),
            _ => Problem(format!("cannot unpack `{}`: {e}", path.shown())),
        });
        opened?;
        // SAFETY: fd was just returned by openat and is owned by no one else.
        Ok(File::from(unsafe { OwnedFd::from_raw_fd(fd) }))
    }

    pub fn symlink(&mut self, path: &EntryPath, target: &[u8]) -> Result<(), Problem> {
        check_link_target(path, target)?;
        let name = c_name(path.components.last().expect("checked paths are not empty"));
        let target = c_name(target);
        let parent = self.parent_of(path)?;
        // SAFETY: both strings are NUL-terminated and alive for the call;
        // parent is an open descriptor.
        let rc = unsafe { libc::symlinkat(target.as_ptr(), parent.as_raw_fd(), name.as_ptr()) };
        last_error(rc, ()).map_err(|e| match e.raw_os_error() {
            Some(libc::EEXIST) => Problem(format!("`{}` appears twice", path.shown())),
            _ => Problem(format!("cannot unpack `{}`: {e}", path.shown())),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn path(raw: &str) -> EntryPath {
        EntryPath::check(raw.as_bytes()).unwrap().unwrap()
    }

    #[test]
    fn paths_are_checked_as_data() {
        assert_eq!(path("./sys//devices/./x").components.len(), 3);
        assert!(EntryPath::check(b"./").unwrap().is_none());
        for bad in ["/etc/passwd", "sys/../../x", "..", "a/\0b"] {
            assert!(EntryPath::check(bad.as_bytes()).is_err(), "{bad:?}");
        }
        assert!(EntryPath::check("a/".repeat(64).as_bytes()).is_ok());
        assert!(EntryPath::check("a/".repeat(65).as_bytes()).is_err());
        assert!(EntryPath::check(&[b'a'; 4097]).is_err());
    }

    #[test]
    fn links_made_by_the_archive_are_never_followed() {
        let outside = tempfile::tempdir().unwrap();
        let dir = tempfile::tempdir().unwrap();
        let mut x = Extractor::new(dir.path()).unwrap();
        let target = outside.path().to_str().unwrap().as_bytes();
        x.symlink(&path("up"), target).unwrap();
        x.symlink(&path("file"), &[target, b"/passwd"].concat()).unwrap();
        let err = x.file(&path("up/passwd")).unwrap_err();
        assert!(err.0.contains("goes through a symbolic link"), "{}", err.0);
        let err = x.dir(&path("up/sub")).unwrap_err();
        assert!(err.0.contains("goes through a symbolic link"), "{}", err.0);
        let err = x.file(&path("file")).unwrap_err();
        assert!(err.0.contains("would write through a symbolic link"), "{}", err.0);
        assert_eq!(std::fs::read_dir(outside.path()).unwrap().count(), 0);
    }

    #[test]
    fn duplicates_and_kind_clashes() {
        let dir = tempfile::tempdir().unwrap();
        let mut x = Extractor::new(dir.path()).unwrap();
        x.dir(&path("a/b")).unwrap();
        x.dir(&path("a/b")).unwrap();
        x.file(&path("a/f")).unwrap();
        x.file(&path("a/f")).unwrap();
        assert!(x.dir(&path("a/f")).is_err());
        assert!(x.file(&path("a/b")).is_err());
        assert!(x.file(&path("a/f/g")).is_err());
        x.symlink(&path("a/l"), b"b").unwrap();
        assert!(x.symlink(&path("a/l"), b"b").is_err());
    }
}
