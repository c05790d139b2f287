//! `move_pages(2)`: which node each page of a process is on, and moving
//! pages to a node.
//!
//! numa_maps counts pages per mapping; only move_pages answers per page,
//! which is what splitting one writable mapping into `.data`, `.got` and
//! `.bss` needs. It is the one system call in this crate: a query on the
//! live system, not a file, so it cannot be read from a snapshot and
//! callers use it only when their root is live. The query needs the same
//! rights as reading numa_maps (ptrace-read); moving needs CAP_SYS_NICE for
//! another user's process (or `move_all`).

use serde::Serialize;
use thiserror::Error;

/// Pages per system call: bounds the kernel's temporary arrays and ours.
pub const BATCH_PAGES: usize = 4096;

/// MPOL_MF_MOVE / MPOL_MF_MOVE_ALL from `<numaif.h>`.
const MPOL_MF_MOVE: libc::c_int = 1 << 1;
const MPOL_MF_MOVE_ALL: libc::c_int = 1 << 2;

/// Where one page is, as move_pages reports it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum PageStatus {
    Node(u32),
    /// -ENOENT: never touched, or swapped out. Not resident anywhere.
    NotPresent,
    /// -EFAULT: the shared zero page, or no longer mapped.
    ZeroOrUnmapped,
    /// Any other negative status (e.g. -EBUSY, -EACCES when moving), as a
    /// positive errno.
    Failed(i32),
}

#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum PagesError {
    #[error(
        "move_pages on process {pid}: permission denied (another user's process needs root or \
         CAP_SYS_PTRACE to query, CAP_SYS_NICE to move)"
    )]
    PermissionDenied { pid: u32 },
    #[error("move_pages: process {pid} does not exist (it may have exited)")]
    NoSuchProcess { pid: u32 },
    #[error("move_pages is not available: the kernel was built without NUMA support")]
    Unsupported,
    #[error("move_pages: node {node} is not online or may not be used by process {pid}")]
    BadNode { pid: u32, node: u32 },
    #[error("move_pages on process {pid}: {message}")]
    Other { pid: u32, message: String },
}

/// The base page size in bytes.
pub fn page_size_bytes() -> u64 {
    // SAFETY: sysconf has no memory effects.
    let size = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    u64::try_from(size).ok().filter(|s| *s > 0).unwrap_or(4096)
}

/// The node of each page (addresses are rounded down to their page by the
/// kernel). `pid` 0 means this process.
pub fn query(pid: u32, addresses: &[u64]) -> Result<Vec<PageStatus>, PagesError> {
    call(pid, addresses, None, 0)
}

/// Moves each page to `node` and returns where each page is afterwards (or
/// why it could not move). `move_all` also moves pages shared with other
/// processes (MPOL_MF_MOVE_ALL, needs CAP_SYS_NICE).
pub fn move_to(pid: u32, addresses: &[u64], node: u32, move_all: bool) -> Result<Vec<PageStatus>, PagesError> {
    let flags = if move_all { MPOL_MF_MOVE_ALL } else { MPOL_MF_MOVE };
    call(pid, addresses, Some(node), flags)
}

fn call(pid: u32, addresses: &[u64], node: Option<u32>, flags: libc::c_int) -> Result<Vec<PageStatus>, PagesError> {
    let mut out = Vec::with_capacity(addresses.len());
    for batch in addresses.chunks(BATCH_PAGES) {
        let pages: Vec<*mut libc::c_void> = batch.iter().map(|&a| a as usize as *mut libc::c_void).collect();
        let nodes: Option<Vec<libc::c_int>> = node
            .map(|n| libc::c_int::try_from(n).map_err(|_| PagesError::BadNode { pid, node: n }))
            .transpose()?
            .map(|n| vec![n; batch.len()]);
        let mut status: Vec<libc::c_int> = vec![0; batch.len()];
        let nodes_ptr = nodes.as_ref().map_or(std::ptr::null(), |n| n.as_ptr());
        // SAFETY: every pointer refers to a live vector of `batch.len()`
        // elements; the kernel only reads `pages` and `nodes` and writes
        // `status`. The page addresses are not dereferenced by us.
        let result = unsafe {
            libc::syscall(
                libc::SYS_move_pages,
                pid as libc::pid_t,
                batch.len() as libc::c_ulong,
                pages.as_ptr(),
                nodes_ptr,
                status.as_mut_ptr(),
                flags,
            )
        };
        if result < 0 {
            let error = std::io::Error::last_os_error();
            return Err(match error.raw_os_error() {
                Some(libc::EPERM) | Some(libc::EACCES) => PagesError::PermissionDenied { pid },
                Some(libc::ESRCH) => PagesError::NoSuchProcess { pid },
                Some(libc::ENOSYS) => PagesError::Unsupported,
                Some(libc::ENODEV) => PagesError::BadNode {
                    pid,
                    node: node.unwrap_or_default(),
                },
                _ => PagesError::Other {
                    pid,
                    message: error.to_string(),
                },
            });
        }
        out.extend(status.iter().map(|&s| decode(s)));
    }
    Ok(out)
}

fn decode(status: libc::c_int) -> PageStatus {
    match status {
        s if s >= 0 => PageStatus::Node(s as u32),
        s if s == -libc::ENOENT => PageStatus::NotPresent,
        s if s == -libc::EFAULT => PageStatus::ZeroOrUnmapped,
        s => PageStatus::Failed(s.saturating_neg()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statuses_decode() {
        assert_eq!(decode(1), PageStatus::Node(1));
        assert_eq!(decode(-libc::ENOENT), PageStatus::NotPresent);
        assert_eq!(decode(-libc::EFAULT), PageStatus::ZeroOrUnmapped);
        assert_eq!(decode(-libc::EBUSY), PageStatus::Failed(libc::EBUSY));
        assert_eq!(decode(i32::MIN), PageStatus::Failed(i32::MAX));
    }

    #[test]
    fn own_touched_page_is_on_a_node_and_untouched_is_not() {
        let page = page_size_bytes() as usize;
        let mut touched = vec![0u8; page * 2];
        touched[page] = 1;
        let addr = touched.as_ptr() as u64 + page as u64;
        let status = match query(0, &[addr]) {
            Ok(status) => status,
            Err(e) => panic!("{e}"),
        };
        assert!(matches!(status[0], PageStatus::Node(_)), "{status:?}");
        // SAFETY: an anonymous private mapping we unmap ourselves below.
        let fresh = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                page,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        assert_ne!(fresh, libc::MAP_FAILED);
        assert_eq!(query(0, &[fresh as u64]).unwrap(), vec![PageStatus::NotPresent]);
        // Moving to the node it is on is a no-op that must succeed.
        if let PageStatus::Node(node) = status[0] {
            assert_eq!(move_to(0, &[addr], node, false).unwrap(), vec![PageStatus::Node(node)]);
        }
        // SAFETY: unmapping the mapping made above.
        unsafe { libc::munmap(fresh, page) };
        drop(touched);
    }

    #[test]
    fn a_process_that_does_not_exist() {
        let err = query(i32::MAX as u32, &[0x1000]).unwrap_err();
        assert!(
            matches!(err, PagesError::NoSuchProcess { .. } | PagesError::Unsupported),
            "{err}"
        );
    }

    #[test]
    fn an_offline_node_is_refused() {
        let mut page = vec![0u8; page_size_bytes() as usize];
        page[0] = 1;
        match move_to(0, &[page.as_ptr() as u64], 1000, false) {
            Err(PagesError::BadNode { node: 1000, .. }) | Err(PagesError::Unsupported) => {}
            other => panic!("{other:?}"),
        }
    }
}
