//! Opening and reading files we do not trust: anything under a `--root`
//! tree, an unpacked snapshot, or a path a user or a process map names.
//!
//! Two things can go wrong before a single byte is parsed. A FIFO, socket
//! or device where a kernel file should be makes `open` or `read` block
//! forever (or, for some devices, act: opening a watchdog arms it), and a
//! huge or endless file (a sparse 1 TiB file, a link to `/dev/zero`) makes a
//! whole-file read take all memory. So the type is checked with `lstat`
//! before opening (no open at all of a device), the file is opened
//! non-blocking, the type is checked again on the open descriptor (a swap
//! between the two checks cannot slip a FIFO in), and reads stop one byte
//! past a cap.

use std::fs::{File, FileType, Metadata, OpenOptions};
use std::io::{self, Read};
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
use std::path::Path;

// Defined in parse, so the archive crate (below kernel) caps its entries by
// the same number and says caps the same way; re-exported at their old path.
pub use numasleuth_parse::read::{format_cap, MAX_KERNEL_FILE_BYTES};

/// What a file that is not a regular file is, for an error message.
pub fn kind_name(kind: FileType) -> &'static str {
    if kind.is_fifo() {
        "a FIFO"
    } else if kind.is_socket() {
        "a socket"
    } else if kind.is_char_device() {
        "a character device"
    } else if kind.is_block_device() {
        "a block device"
    } else if kind.is_dir() {
        "a directory"
    } else if kind.is_symlink() {
        "a symbolic link"
    } else if kind.is_file() {
        "a regular file"
    } else {
        "an unknown kind of file"
    }
}

fn not_regular(kind: FileType) -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidInput,
        format!("is {}, not a regular file", kind_name(kind)),
    )
}

/// Opens a regular file for reading without ever blocking on it.
///
/// With `follow_last` false the final component must not be a symlink
/// (callers that resolved links themselves, such as [`crate::Root`]); with
/// it true a link is followed and what it points at is checked (a user's
/// path, or `/proc/PID/map_files/…`, which are links by design).
pub fn open_regular(path: &Path, follow_last: bool) -> io::Result<(File, Metadata)> {
    let before = if follow_last {
        std::fs::metadata(path)?
    } else {
        std::fs::symlink_metadata(path)?
    };
    if !before.file_type().is_file() {
        return Err(not_regular(before.file_type()));
    }
    let mut flags = libc::O_NONBLOCK | libc::O_CLOEXEC | libc::O_NOCTTY;
    if !follow_last {
        flags |= libc::O_NOFOLLOW;
    }
    let file = OpenOptions::new().read(true).custom_flags(flags).open(path)?;
    let meta = file.metadata()?;
    if !meta.file_type().is_file() {
        return Err(not_regular(meta.file_type()));
    }
    Ok((file, meta))
}

/// [`open_regular`] with links followed, for the live system's `/proc` and
/// `/sys` only; returns the file and a size hint for [`read_capped`].
///
/// A path under /proc or /sys is walked once, beneath that mount and
/// refusing magic links, where the kernel has `openat2`: see
/// `crate::live_open` for why no device or FIFO can then be reached. What is opened is not `fstat`ed: a directory fails the first
/// read (EISDIR), and every read stops at a cap. Elsewhere one `stat`
/// before opening keeps devices out; nobody can swap the kernel's own files
/// between it and the open, and the open does not block.
pub fn open_kernel_file(path: &Path) -> io::Result<(File, u64)> {
    let flags = libc::O_NONBLOCK | libc::O_CLOEXEC | libc::O_NOCTTY;
    if let Some(opened) = crate::live_open::open_kernel_path(path, libc::O_RDONLY | flags) {
        return Ok((opened?, 0));
    }
    let before = std::fs::metadata(path)?;
    if !before.file_type().is_file() {
        return Err(not_regular(before.file_type()));
    }
    let file = OpenOptions::new().read(true).custom_flags(flags).open(path)?;
    Ok((file, before.len()))
}

/// The shortest sysfs attribute value that might not be whole after one
/// read: an attribute's `show` writes at most a page, and a page is at
/// least 4 KiB.
const SYSFS_PAGE_BYTES: usize = 4096;

/// Reads a sysfs attribute of the live system. `show` produces the whole
/// value on the first read, so a first read shorter than a page is all of
/// it, and the read that would only return 0 is skipped: `topo` reads about
/// a hundred attributes, and those reads were a sixth of its system calls.
/// A value a page long or longer is read on to the end, as any file is.
pub fn read_sysfs_attribute(mut file: File, cap_bytes: u64) -> io::Result<Vec<u8>> {
    let mut bytes = vec![0u8; 2 * SYSFS_PAGE_BYTES];
    let first = loop {
        match file.read(&mut bytes) {
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            result => break result?,
        }
    };
    bytes.truncate(first);
    if first < SYSFS_PAGE_BYTES {
        return Ok(bytes);
    }
    // The rest under the same cap, counting what was already read.
    read_capped(bytes.as_slice().chain(file), 0, cap_bytes)
}

/// Opens an existing regular file for one write (a sysctl, an IRQ
/// affinity), with the same checks as [`open_regular`], so a FIFO without a
/// reader fails at once instead of blocking the writer.
pub fn open_regular_for_write(path: &Path) -> io::Result<File> {
    let before = std::fs::symlink_metadata(path)?;
    if !before.file_type().is_file() {
        return Err(not_regular(before.file_type()));
    }
    let flags = libc::O_NONBLOCK | libc::O_CLOEXEC | libc::O_NOCTTY | libc::O_NOFOLLOW;
    let file = OpenOptions::new()
        .write(true)
        .truncate(true)
        .custom_flags(flags)
        .open(path)?;
    let meta = file.metadata()?;
    if !meta.file_type().is_file() {
        return Err(not_regular(meta.file_type()));
    }
    Ok(file)
}

/// The error for a file over its cap.
pub fn too_large(cap_bytes: u64) -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidData,
        format!("larger than {}; refusing to read it", format_cap(cap_bytes)),
    )
}

/// Reads all of `file`, or fails once it passes `cap_bytes` without ever
/// holding more than the cap plus one byte. `size_hint` is the file's
/// `st_size`: 0 for most /proc files (read to EOF anyway), and when it is
/// already over the cap nothing is read at all.
pub fn read_capped(file: impl Read, size_hint: u64, cap_bytes: u64) -> io::Result<Vec<u8>> {
    if size_hint > cap_bytes {
        return Err(too_large(cap_bytes));
    }
    // sysfs reports 4096 for every attribute, /proc 0: a hint, not a size.
    let mut bytes = Vec::with_capacity(size_hint.min(cap_bytes) as usize + 1);
    file.take(cap_bytes + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > cap_bytes {
        return Err(too_large(cap_bytes));
    }
    Ok(bytes)
}

/// [`read_capped`] for a regular file whose size `size_bytes` is known
/// from its `stat`: one read of that size plus one byte usually returns the
/// whole file, and since a read of a regular file is only short at its end,
/// no second read is needed to see the end. A file that grew since its
/// `stat` is read on to its end, under the same cap.
pub fn read_sized(mut file: File, size_bytes: u64, cap_bytes: u64) -> io::Result<Vec<u8>> {
    if size_bytes > cap_bytes {
        return Err(too_large(cap_bytes));
    }
    let mut bytes = vec![0u8; size_bytes as usize + 1];
    let got = loop {
        match file.read(&mut bytes) {
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            other => break other?,
        }
    };
    bytes.truncate(got);
    if got as u64 <= size_bytes {
        return Ok(bytes);
    }
    if got as u64 > cap_bytes {
        return Err(too_large(cap_bytes));
    }
    let rest = read_capped(file, 0, cap_bytes - got as u64)?;
    bytes.extend(rest);
    Ok(bytes)
}

/// Makes a FIFO, for tests that put one where a file should be.
#[cfg(test)]
pub(crate) fn mkfifo(path: &Path) {
    use std::os::unix::ffi::OsStrExt;
    let c_path = std::ffi::CString::new(path.as_os_str().as_bytes()).unwrap();
    // SAFETY: c_path is a valid NUL-terminated string that outlives the call.
    let rc = unsafe { libc::mkfifo(c_path.as_ptr(), 0o644) };
    assert_eq!(rc, 0, "mkfifo {}: {}", path.display(), io::Error::last_os_error());
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn read_sized_reads_a_file_whole_and_one_that_grew_under_the_cap() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        std::fs::write(&path, "0-3\n").unwrap();
        assert_eq!(read_sized(File::open(&path).unwrap(), 4, 100).unwrap(), b"0-3\n");
        // Stat said 2 bytes; it has 4 by the time it is read.
        assert_eq!(read_sized(File::open(&path).unwrap(), 2, 100).unwrap(), b"0-3\n");
        std::fs::write(&path, vec![b'x'; 300]).unwrap();
        assert!(read_sized(File::open(&path).unwrap(), 10, 100).is_err());
        assert!(read_sized(File::open(&path).unwrap(), 100, 100).is_err());
        assert!(read_sized(File::open(&path).unwrap(), 300, 100).is_err());
        assert_eq!(read_sized(File::open(&path).unwrap(), 300, 300).unwrap().len(), 300);
    }

    #[test]
    fn a_fifo_is_refused_without_blocking() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("fifo");
        mkfifo(&fifo);
        for follow in [false, true] {
            let err = open_regular(&fifo, follow).unwrap_err();
            assert_eq!(err.to_string(), "is a FIFO, not a regular file");
        }
        let err = open_regular_for_write(&fifo).unwrap_err();
        assert_eq!(err.to_string(), "is a FIFO, not a regular file");
    }

    #[test]
    fn devices_sockets_and_directories_are_refused() {
        let err = open_regular(Path::new("/dev/zero"), true).unwrap_err();
        assert_eq!(err.to_string(), "is a character device, not a regular file");
        let dir = tempfile::tempdir().unwrap();
        let socket = dir.path().join("sock");
        let _listener = std::os::unix::net::UnixListener::bind(&socket).unwrap();
        let err = open_regular(&socket, false).unwrap_err();
        assert_eq!(err.to_string(), "is a socket, not a regular file");
        let err = open_regular(dir.path(), false).unwrap_err();
        assert_eq!(err.to_string(), "is a directory, not a regular file");
    }

    #[test]
    fn links_are_followed_only_when_asked() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("file"), "x").unwrap();
        std::os::unix::fs::symlink("file", dir.path().join("link")).unwrap();
        std::os::unix::fs::symlink("/dev/zero", dir.path().join("zero")).unwrap();
        assert!(open_regular(&dir.path().join("link"), true).is_ok());
        let err = open_regular(&dir.path().join("link"), false).unwrap_err();
        assert_eq!(err.to_string(), "is a symbolic link, not a regular file");
        let err = open_regular(&dir.path().join("zero"), true).unwrap_err();
        assert_eq!(err.to_string(), "is a character device, not a regular file");
    }

    #[test]
    fn reads_stop_one_byte_past_the_cap() {
        // An endless source: only cap + 1 bytes may ever be pulled from it.
        let err = read_capped(io::repeat(b'7'), 0, 1 << 20).unwrap_err();
        assert_eq!(err.to_string(), "larger than 1 MiB; refusing to read it");
        assert_eq!(read_capped(&b"0-3\n"[..], 0, 4).unwrap(), b"0-3\n");
        assert!(read_capped(&b"0-3\n"[..], 0, 3).is_err());
        // An honest st_size over the cap is refused before any read.
        assert!(read_capped(io::empty(), 5, 4).is_err());
    }

    #[test]
    fn a_sysfs_attribute_is_read_whole() {
        let dir = tempfile::tempdir().unwrap();
        for len in [0, 5, SYSFS_PAGE_BYTES - 1, SYSFS_PAGE_BYTES, 3 * SYSFS_PAGE_BYTES + 7] {
            let path = dir.path().join(format!("attr{len}"));
            let value: Vec<u8> = (0..len).map(|i| b'0' + (i % 10) as u8).collect();
            std::fs::write(&path, &value).unwrap();
            let read = read_sysfs_attribute(File::open(&path).unwrap(), MAX_KERNEL_FILE_BYTES).unwrap();
            assert_eq!(read, value, "length {len}");
        }
        let big = dir.path().join("big");
        std::fs::write(&big, vec![b'x'; 3 * SYSFS_PAGE_BYTES]).unwrap();
        let err = read_sysfs_attribute(File::open(&big).unwrap(), 2 * SYSFS_PAGE_BYTES as u64).unwrap_err();
        assert!(err.to_string().contains("larger than 8 KiB"), "{err}");
    }

    #[test]
    fn a_sparse_giant_is_refused_cheaply() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("huge");
        let file = File::create(&path).unwrap();
        file.set_len(1 << 34).unwrap();
        let (file, meta) = open_regular(&path, false).unwrap();
        let err = read_capped(file, meta.len(), MAX_KERNEL_FILE_BYTES).unwrap_err();
        assert!(err.to_string().contains("larger than 16 MiB"), "{err}");
    }
}
