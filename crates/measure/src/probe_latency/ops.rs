//! The operations `probe-latency` times. Each is one call of `once()`;
//! setup (and for files, creation and removal) happens outside the timing.
//!
//! Files: the probe only ever writes to a file it created itself with
//! O_EXCL, so no user data can be overwritten, and at the end it removes
//! that file only if the path still names the very inode it created.

use std::fs::File;
use std::io;
use std::os::unix::fs::{FileExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

/// Bytes each alloc-touch maps, binds and touches: 16 base pages, enough
/// to go through the page allocator's slow path when a node is short.
pub const ALLOC_BYTES: usize = 64 * 1024;
/// Bytes per write.
pub const WRITE_BYTES: usize = 4096;
/// Writes wrap around in this much file, so a long run stays small.
pub const FILE_SPAN_BYTES: u64 = 64 * 1024 * 1024;

pub trait Operation {
    fn once(&mut self) -> io::Result<()>;
}

pub struct AllocTouch {
    node: u32,
    page_bytes: usize,
}

impl AllocTouch {
    /// Checks once, before timing anything, that pages bound to `node`
    /// really land there (move_pages in query mode).
    pub fn new(node: u32, page_bytes: usize) -> io::Result<AllocTouch> {
        let op = AllocTouch { node, page_bytes };
        let found = op.with_pages(query_node)?;
        if found != node as i32 {
            return Err(io::Error::other(format!(
                "a page bound to node {node} landed on node {found}: the kernel did not honour mbind"
            )));
        }
        Ok(op)
    }

    fn with_pages<T>(&self, inspect: impl FnOnce(*mut u8) -> io::Result<T>) -> io::Result<T> {
        // SAFETY: a fresh private anonymous mapping at an address of the
        // kernel's choosing; nothing else refers to it.
        let addr = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                ALLOC_BYTES,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        if addr == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        let addr = addr.cast::<u8>();
        let result = bind(addr, ALLOC_BYTES, self.node).and_then(|()| {
            for offset in (0..ALLOC_BYTES).step_by(self.page_bytes) {
                // SAFETY: `offset < ALLOC_BYTES`, inside the mapping above;
                // a volatile write so the fault is not optimised away.
                unsafe { addr.add(offset).write_volatile(1) };
            }
            inspect(addr)
        });
        // SAFETY: unmaps exactly the mapping made above, no longer used.
        unsafe { libc::munmap(addr.cast(), ALLOC_BYTES) };
        result
    }
}

impl Operation for AllocTouch {
    fn once(&mut self) -> io::Result<()> {
        self.with_pages(|_| Ok(()))
    }
}

fn bind(addr: *mut u8, len: usize, node: u32) -> io::Result<()> {
    crate::placement::bind_to_node(addr, len, node)
}

fn query_node(addr: *mut u8) -> io::Result<i32> {
    let status = crate::placement::query_nodes(&[addr.cast::<libc::c_void>()])?;
    Ok(status.first().copied().unwrap_or(-libc::ENOENT))
}

/// A file the probe created; removed on drop if it is still ours.
pub struct FileWrites {
    path: PathBuf,
    file: File,
    sync: bool,
    offset_bytes: u64,
    buffer: Vec<u8>,
}

impl FileWrites {
    pub fn create(path: &Path, sync: bool) -> io::Result<FileWrites> {
        let file = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
            .open(path)
            .map_err(|e| match e.kind() {
                io::ErrorKind::AlreadyExists => io::Error::new(
                    e.kind(),
                    "it already exists; probe-latency writes only to a new file it creates (and removes), \
                     never over existing data",
                ),
                _ => e,
            })?;
        Ok(FileWrites {
            path: path.to_path_buf(),
            file,
            sync,
            offset_bytes: 0,
            buffer: vec![0x5a; WRITE_BYTES],
        })
    }
}

impl Operation for FileWrites {
    fn once(&mut self) -> io::Result<()> {
        self.file.write_all_at(&self.buffer, self.offset_bytes)?;
        self.offset_bytes = (self.offset_bytes + WRITE_BYTES as u64) % FILE_SPAN_BYTES;
        if self.sync {
            self.file.sync_all()?;
        }
        Ok(())
    }
}

impl Drop for FileWrites {
    fn drop(&mut self) {
        // Remove the path only while it names the inode we created: if
        // someone replaced it meanwhile, theirs stays.
        let ours = self.file.metadata().ok();
        let there = std::fs::symlink_metadata(&self.path).ok();
        if let (Some(ours), Some(there)) = (ours, there) {
            if ours.dev() == there.dev() && ours.ino() == there.ino() {
                let _ = std::fs::remove_file(&self.path);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_existing_file_is_never_written() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("data");
        std::fs::write(&path, "user data").unwrap();
        let error = FileWrites::create(&path, false).err().unwrap();
        assert!(error.to_string().contains("already exists"), "{error}");
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "user data");
        // Nor through a dangling symlink.
        let link = dir.path().join("link");
        std::os::unix::fs::symlink(dir.path().join("target"), &link).unwrap();
        assert!(FileWrites::create(&link, false).is_err());
        assert!(!dir.path().join("target").exists());
    }

    #[test]
    fn the_probe_file_is_bounded_and_removed() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("probe");
        let mut writes = FileWrites::create(&path, true).unwrap();
        for _ in 0..3 {
            writes.once().unwrap();
        }
        assert_eq!(std::fs::metadata(&path).unwrap().len(), 3 * WRITE_BYTES as u64);
        drop(writes);
        assert!(!path.exists());
    }

    #[test]
    fn a_replaced_file_is_left_alone() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("probe");
        let writes = FileWrites::create(&path, false).unwrap();
        std::fs::remove_file(&path).unwrap();
        std::fs::write(&path, "someone else's").unwrap();
        drop(writes);
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "someone else's");
    }

    #[test]
    fn alloc_touch_lands_on_its_node() {
        let page_bytes = crate::sys::page_size();
        let mut op = AllocTouch::new(0, page_bytes).unwrap();
        op.once().unwrap();
        // The node the kernel reports for a freshly bound and touched page,
        // asked here as well as inside `new`.
        assert_eq!(op.with_pages(query_node).unwrap(), 0);
    }
}
