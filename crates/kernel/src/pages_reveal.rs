//! Ending NUMA-balancing hinting faults on another process's pages, so
//! move_pages can see and move them.
//!
//! Why this exists: the NUMA-balancing scanner marks pages PROT_NONE and
//! waits for the process to touch them (the hinting fault). On 6.1-era
//! kernels move_pages skips such pages, for queries and moves alike
//! ("not present"), so a page the process has not touched since stays
//! unmovable, however resident numa_maps says it is. mbind would see it
//! but acts only on the caller's own address space.
//!
//! How: read one byte of each page through process_vm_readv. That is a
//! get_user_pages on the target's memory without FOLL_FORCE, which takes
//! the hinting fault in our context: the page table entry is restored and
//! move_pages sees the page again. The fault could also migrate the page
//! toward the CPU we run on (migrate-on-fault follows the faulting task's
//! policy when the mapping has none), so the reading thread first sets its
//! own policy to MPOL_PREFERRED without MPOL_F_MOF, which turns that off:
//! the page stays where it is. Reading changes no byte of the target and
//! needs ptrace-attach rights over it (as root, or the same user with
//! kernel.yama.ptrace_scope 0).

use crate::pages::PagesError;

/// iovecs per process_vm_readv call (the kernel's UIO_MAXIOV).
const IOVECS_PER_CALL: usize = 1024;

/// MPOL_PREFERRED from `<numaif.h>`.
const MPOL_PREFERRED: libc::c_int = 1;

/// What [`reveal`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Revealed {
    /// Pages a byte was read from: any hinting fault on them is over.
    pub read: u64,
    /// Pages that could not be read (no longer mapped, or not readable).
    pub unreadable: u64,
    /// Whether the reading thread's policy kept the pages where they were;
    /// if not, a hinting fault may have moved a page toward our node.
    pub placement_kept: bool,
}

/// Reads one byte of each page of `pid` at `addresses` from a thread whose
/// memory policy is MPOL_PREFERRED on `node`, so no hinting fault it takes
/// migrates the page.
pub fn reveal(pid: u32, addresses: &[u64], node: u32) -> Result<Revealed, PagesError> {
    std::thread::scope(|s| {
        s.spawn(|| {
            let placement_kept = prefer_without_migrate_on_fault(node);
            let mut done = read_one_byte_each(pid, addresses)?;
            done.placement_kept = placement_kept;
            Ok(done)
        })
        .join()
        .unwrap_or_else(|_| {
            Err(PagesError::Other {
                pid,
                message: "the page-reading thread panicked".into(),
            })
        })
    })
}

/// Sets this thread's policy; false when the kernel refused it.
fn prefer_without_migrate_on_fault(node: u32) -> bool {
    let bits = libc::c_ulong::BITS as usize;
    let mut mask: Vec<libc::c_ulong> = vec![0; node as usize / bits + 1];
    mask[node as usize / bits] |= 1 << (node as usize % bits);
    // The kernel reads `maxnode - 1` bits: one more than the mask holds.
    let maxnode = (mask.len() * bits + 1) as libc::c_ulong;
    // SAFETY: `mask` is a live array of `mask.len()` words, which covers
    // the `maxnode - 1` bits the kernel reads; set_mempolicy changes only
    // this thread's policy.
    let rc = unsafe { libc::syscall(libc::SYS_set_mempolicy, MPOL_PREFERRED, mask.as_ptr(), maxnode) };
    rc == 0
}

fn read_one_byte_each(pid: u32, addresses: &[u64]) -> Result<Revealed, PagesError> {
    let mut done = Revealed::default();
    let mut sink = vec![0u8; IOVECS_PER_CALL];
    let mut rest = addresses;
    while !rest.is_empty() {
        let batch = &rest[..rest.len().min(IOVECS_PER_CALL)];
        let local: Vec<libc::iovec> = sink[..batch.len()]
            .iter_mut()
            .map(|b| libc::iovec {
                iov_base: b as *mut u8 as *mut libc::c_void,
                iov_len: 1,
            })
            .collect();
        let remote: Vec<libc::iovec> = batch
            .iter()
            .map(|&a| libc::iovec {
                iov_base: a as usize as *mut libc::c_void,
                iov_len: 1,
            })
            .collect();
        // SAFETY: `local` points at `batch.len()` distinct live bytes of
        // `sink`, each iovec one byte long; the remote iovecs are only
        // addresses in the other process, checked by the kernel.
        let n = unsafe {
            libc::process_vm_readv(
                pid as libc::pid_t,
                local.as_ptr(),
                local.len() as libc::c_ulong,
                remote.as_ptr(),
                remote.len() as libc::c_ulong,
                0,
            )
        };
        // The call stops at the first remote iovec it cannot read: count
        // the ones read, skip the failing one, go on after it.
        let read = if n < 0 {
            let error = std::io::Error::last_os_error();
            match error.raw_os_error() {
                Some(libc::EFAULT) => 0,
                Some(libc::EPERM) | Some(libc::EACCES) => return Err(PagesError::PermissionDenied { pid }),
                Some(libc::ESRCH) => return Err(PagesError::NoSuchProcess { pid }),
                _ => {
                    return Err(PagesError::Other {
                        pid,
                        message: format!("process_vm_readv: {error}"),
                    })
                }
            }
        } else {
            n as usize
        };
        done.read += read as u64;
        let consumed = if read < batch.len() {
            done.unreadable += 1;
            read + 1
        } else {
            read
        };
        rest = &rest[consumed..];
    }
    Ok(done)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pages::page_size_bytes;

    #[test]
    fn reads_mapped_pages_and_skips_a_hole() {
        let page = page_size_bytes() as usize;
        // SAFETY: an anonymous private mapping of 3 pages, unmapped below;
        // the middle page is unmapped first to make a hole.
        let base = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                page * 3,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        assert_ne!(base, libc::MAP_FAILED);
        let base = base as u64;
        // SAFETY: the first page of the mapping above, writable.
        unsafe { *(base as *mut u8) = 7 };
        assert_eq!(
            // SAFETY: unmapping the middle page of our own mapping.
            unsafe { libc::munmap((base + page as u64) as *mut libc::c_void, page) },
            0
        );
        let addresses = [base, base + page as u64, base + 2 * page as u64];
        let done = reveal(std::process::id(), &addresses, 0).unwrap();
        assert_eq!((done.read, done.unreadable), (2, 1), "{done:?}");
        assert!(done.placement_kept, "MPOL_PREFERRED on node 0 is always allowed");
        // Reading changed nothing.
        // SAFETY: the first page is still mapped.
        assert_eq!(unsafe { *(base as *const u8) }, 7);
        // SAFETY: unmapping what is left of our mapping.
        unsafe {
            libc::munmap(base as *mut libc::c_void, page);
            libc::munmap((base + 2 * page as u64) as *mut libc::c_void, page);
        }
    }

    #[test]
    fn more_pages_than_one_call_takes() {
        let page = page_size_bytes() as usize;
        let pages = IOVECS_PER_CALL + 5;
        let buffer = vec![1u8; page * pages];
        let addresses: Vec<u64> = (0..pages).map(|i| buffer.as_ptr() as u64 + (i * page) as u64).collect();
        let done = reveal(std::process::id(), &addresses, 0).unwrap();
        assert_eq!((done.read, done.unreadable), (pages as u64, 0));
    }

    #[test]
    fn a_process_that_does_not_exist() {
        let err = reveal(i32::MAX as u32, &[0x1000], 0).unwrap_err();
        assert!(matches!(err, PagesError::NoSuchProcess { .. }), "{err}");
    }
}
