//! Opening the live system's own /proc and /sys files with one path walk.
//!
//! `topo` opens about a hundred kernel files, and walking each path twice
//! (a `stat` to keep devices out, then the `open`) was a third of its
//! system time. Here a path under /proc or /sys is opened with `openat2`
//! relative to that mount, with `RESOLVE_BENEATH` (no `..` or absolute link
//! out of it) and `RESOLVE_NO_MAGICLINKS` (no `/proc/PID/fd/N` or
//! `/proc/PID/root`): procfs and sysfs hold no device or FIFO, so what is
//! reached that way never is one. The mounts are checked once, by their
//! filesystem magic, so a /sys that is not sysfs gets no shortcut.
//!
//! Kernels before 5.6 (or a seccomp filter) refuse `openat2`; callers then
//! take the `stat`-then-`open` path, for the rest of the run.

use std::ffi::CString;
use std::fs::File;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::OnceLock;

static UNAVAILABLE: AtomicBool = AtomicBool::new(false);
static SYS: OnceLock<Option<File>> = OnceLock::new();
static PROC: OnceLock<Option<File>> = OnceLock::new();

/// `/sys` or `/proc`, opened once, when it is the kernel's filesystem.
fn mount(name: &str, magic: i64, cell: &'static OnceLock<Option<File>>) -> Option<&'static File> {
    cell.get_or_init(|| {
        let path = CString::new(name).ok()?;
        // SAFETY: a NUL-terminated path alive for the call.
        let fd = unsafe { libc::open(path.as_ptr(), libc::O_PATH | libc::O_DIRECTORY | libc::O_CLOEXEC) };
        if fd < 0 {
            return None;
        }
        // SAFETY: the kernel just returned this descriptor, owned by no one else.
        let dir = unsafe { File::from_raw_fd(fd) };
        // SAFETY: statfs is plain integers, filled by the kernel.
        let mut stats: libc::statfs = unsafe { std::mem::zeroed() };
        // SAFETY: a valid descriptor and a statfs to fill.
        let ok = unsafe { libc::fstatfs(dir.as_raw_fd(), &mut stats) } == 0;
        (ok && stats.f_type as i64 == magic).then_some(dir)
    })
    .as_ref()
}

/// Opens `path` if it lies under the live /sys or /proc (see the module
/// comment); `None` when it does not, or this kernel cannot do it, so the
/// caller takes its slower path.
pub(crate) fn open_kernel_path(path: &Path, flags: libc::c_int) -> Option<io::Result<File>> {
    if UNAVAILABLE.load(Ordering::Relaxed) {
        return None;
    }
    let bytes = path.as_os_str().as_bytes();
    // The magic numbers' C type differs between targets.
    #[allow(clippy::unnecessary_cast)]
    let (dir, rest) = if let Some(rest) = bytes.strip_prefix(b"/sys/") {
        (mount("/sys", libc::SYSFS_MAGIC as i64, &SYS)?, rest)
    } else if let Some(rest) = bytes.strip_prefix(b"/proc/") {
        (mount("/proc", libc::PROC_SUPER_MAGIC as i64, &PROC)?, rest)
    } else {
        return None;
    };
    let Ok(c_rest) = CString::new(rest) else {
        return Some(Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "path holds a NUL byte",
        )));
    };
    // `open_how` is non-exhaustive: zeroed, then filled.
    // SAFETY: open_how is plain integers, for which zero is valid.
    let mut how: libc::open_how = unsafe { std::mem::zeroed() };
    how.flags = (flags | libc::O_CLOEXEC) as u64;
    how.resolve = libc::RESOLVE_BENEATH | libc::RESOLVE_NO_MAGICLINKS;
    let fd = openat2(dir.as_raw_fd(), &c_rest, &how);
    if fd < 0 {
        let error = io::Error::last_os_error();
        if matches!(error.raw_os_error(), Some(libc::ENOSYS | libc::EPERM | libc::E2BIG)) {
            UNAVAILABLE.store(true, Ordering::Relaxed);
            return None;
        }
        return Some(Err(error));
    }
    // SAFETY: the kernel just returned this descriptor, owned by no one else.
    Some(Ok(unsafe { File::from_raw_fd(fd as libc::c_int) }))
}

/// Where `path` leads with every link followed, as the kernel resolves it:
/// one `O_PATH` open and a `readlink` of its `/proc/self/fd` entry, instead
/// of an `lstat` per component. `None` when that cannot be done here (no
/// `openat2`, no /proc); an error when the path does not resolve.
pub(crate) fn canonical(path: &Path) -> Option<io::Result<String>> {
    let handle = match open_kernel_path(path, libc::O_PATH)? {
        Ok(handle) => handle,
        Err(e) => return Some(Err(e)),
    };
    let target = std::fs::read_link(format!("/proc/self/fd/{}", handle.as_raw_fd())).ok()?;
    let target = target.to_str()?;
    // A path the kernel cannot name whole (unreachable from this root).
    if !target.starts_with('/') || target.ends_with(" (deleted)") {
        return None;
    }
    Some(Ok(target.to_string()))
}

/// Tries of an `openat2` the kernel answered with EAGAIN.
const EAGAIN_TRIES: usize = 16;

/// `openat2(dir, path, how)`, tried again while the kernel says EAGAIN: with
/// `RESOLVE_BENEATH` or `RESOLVE_IN_ROOT` it does when a rename or mount
/// anywhere on the system raced a `..` in the walk (sysfs links are full of
/// them), and openat2(2) asks the caller to retry. Returns the raw result
/// (a descriptor, or -1 with errno set).
pub(crate) fn openat2(dir: std::os::fd::RawFd, path: &std::ffi::CStr, how: &libc::open_how) -> libc::c_long {
    let mut fd = -1;
    for _ in 0..EAGAIN_TRIES {
        // SAFETY: a valid directory descriptor, a NUL-terminated path and
        // an open_how of the size passed, all alive for the call.
        fd = unsafe {
            libc::syscall(
                libc::SYS_openat2,
                dir,
                path.as_ptr(),
                how as *const libc::open_how,
                std::mem::size_of::<libc::open_how>(),
            )
        };
        if fd >= 0 || io::Error::last_os_error().raw_os_error() != Some(libc::EAGAIN) {
            break;
        }
    }
    fd
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn opens_kernel_files_only_beneath_proc_and_sys() {
        let file = open_kernel_path(Path::new("/proc/self/stat"), libc::O_RDONLY)
            .expect("openat2 is available on every kernel CI runs")
            .unwrap();
        assert!(file.metadata().unwrap().is_file());
        // A magic link, a way out with `..`, and a path elsewhere.
        let refused = open_kernel_path(Path::new("/proc/self/root/etc/hostname"), libc::O_RDONLY)
            .unwrap()
            .unwrap_err();
        assert_eq!(refused.raw_os_error(), Some(libc::ELOOP), "{refused}");
        let escaped = open_kernel_path(Path::new("/sys/../dev/zero"), libc::O_RDONLY)
            .unwrap()
            .unwrap_err();
        assert_eq!(escaped.raw_os_error(), Some(libc::EXDEV), "{escaped}");
        assert!(open_kernel_path(Path::new("/dev/zero"), libc::O_RDONLY).is_none());
        assert!(open_kernel_path(Path::new("/tmp/x"), libc::O_RDONLY).is_none());
    }

    #[test]
    fn canonical_follows_sysfs_links() {
        let resolved = canonical(Path::new("/sys/class/net/lo")).unwrap().unwrap();
        assert_eq!(resolved, "/sys/devices/virtual/net/lo");
        let missing = canonical(Path::new("/sys/class/net/no-such-device"))
            .unwrap()
            .unwrap_err();
        assert_eq!(missing.kind(), io::ErrorKind::NotFound);
        assert!(canonical(Path::new("/tmp")).is_none());
    }
}
