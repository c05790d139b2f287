//! Thin wrappers over the Linux syscalls that no crate wraps for us
//! (`mbind`, `move_pages`) and the affinity calls, sized dynamically so
//! there is no 1024-CPU (`cpu_set_t`) ceiling.
//!
//! Each wrapper returns `io::Result` and keeps its `unsafe` block to the one
//! call it makes.

use std::io;

/// Bits per mask word, as the kernel counts `unsigned long`.
const WORD_BITS: usize = libc::c_ulong::BITS as usize;

/// A bit mask of ids in kernel layout (an array of `unsigned long`).
pub(crate) fn mask_with(ids: &[u32], min_bits: usize) -> Vec<libc::c_ulong> {
    let highest = ids.iter().copied().max().map_or(0, |id| id as usize + 1);
    let words = highest.max(min_bits).div_ceil(WORD_BITS).max(1);
    let mut mask = vec![0 as libc::c_ulong; words];
    for &id in ids {
        mask[id as usize / WORD_BITS] |= 1 << (id as usize % WORD_BITS);
    }
    mask
}

pub(crate) fn mask_ids(mask: &[libc::c_ulong]) -> Vec<u32> {
    let mut ids = Vec::new();
    for (w, word) in mask.iter().enumerate() {
        for bit in 0..WORD_BITS {
            if word & (1 << bit) != 0 {
                ids.push((w * WORD_BITS + bit) as u32);
            }
        }
    }
    ids
}

fn check(ret: libc::c_long) -> io::Result<libc::c_long> {
    if ret < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(ret)
    }
}

/// Pins the calling thread to exactly `cpu`.
pub(crate) fn set_affinity(cpu: u32) -> io::Result<()> {
    let mask = mask_with(&[cpu], 0);
    let bytes = mask.len() * std::mem::size_of::<libc::c_ulong>();
    // SAFETY: the kernel reads `bytes` bytes from `mask`, which owns exactly
    // that many; pid 0 means the calling thread.
    let ret = unsafe { libc::syscall(libc::SYS_sched_setaffinity, 0, bytes, mask.as_ptr()) };
    check(ret).map(drop)
}

/// Sets the affinity of thread `tid` (0: the calling one) to a mask built
/// beforehand. Async-signal-safe: no allocation, so it may run between
/// fork and exec.
pub(crate) fn set_affinity_raw(tid: u32, mask: &[libc::c_ulong]) -> io::Result<()> {
    let bytes = std::mem::size_of_val(mask);
    // SAFETY: the kernel reads `bytes` bytes from `mask`, which owns exactly
    // that many; an unknown tid is an error (ESRCH), not undefined behaviour.
    let ret = unsafe { libc::syscall(libc::SYS_sched_setaffinity, tid as libc::pid_t, bytes, mask.as_ptr()) };
    check(ret).map(drop)
}

/// The calling thread's allowed CPUs, growing the mask until the kernel's
/// fits (it refuses a buffer smaller than its `nr_cpu_ids` with EINVAL).
pub(crate) fn get_affinity() -> io::Result<Vec<u32>> {
    let mut words = 16;
    loop {
        let mut mask = vec![0 as libc::c_ulong; words];
        let bytes = words * std::mem::size_of::<libc::c_ulong>();
        // SAFETY: the kernel writes at most `bytes` bytes into `mask`, which
        // owns exactly that many.
        let ret = unsafe { libc::syscall(libc::SYS_sched_getaffinity, 0, bytes, mask.as_mut_ptr()) };
        match check(ret) {
            Ok(_) => return Ok(mask_ids(&mask)),
            Err(e) if e.raw_os_error() == Some(libc::EINVAL) && words < (1 << 16) => words *= 4,
            Err(e) => return Err(e),
        }
    }
}

/// `mbind(addr, len, MPOL_BIND, {node})`.
// The pointer is only handed to the kernel, which checks the range: a
// wrong one is an error (EINVAL, EFAULT), never a read or write here.
#[allow(clippy::not_unsafe_ptr_arg_deref)]
pub fn bind_to_node(addr: *mut u8, len: usize, node: u32) -> io::Result<()> {
    let mask = mask_with(&[node], 0);
    // The kernel reads `maxnode - 1` bits, so pass one more than the mask holds.
    let max_node = mask.len() * WORD_BITS + 1;
    // SAFETY: `addr..addr+len` is a mapping this process owns; the kernel
    // reads `max_node - 1` bits from `mask`, which owns exactly that many.
    let ret = unsafe {
        libc::syscall(
            libc::SYS_mbind,
            addr,
            len,
            libc::MPOL_BIND,
            mask.as_ptr(),
            max_node,
            0u32,
        )
    };
    check(ret).map(drop)
}

/// For each page address, the node it is on, or a negative errno
/// (`-ENOENT`: not present) — `move_pages` in query mode (no target nodes).
pub fn query_nodes(pages: &[*mut libc::c_void]) -> io::Result<Vec<i32>> {
    let mut status = vec![0i32; pages.len()];
    // SAFETY: `pages` and `status` both hold `pages.len()` elements; with a
    // NULL node array the kernel only reads `pages` and writes `status`.
    let ret = unsafe {
        libc::syscall(
            libc::SYS_move_pages,
            0,
            pages.len(),
            pages.as_ptr(),
            std::ptr::null::<i32>(),
            status.as_mut_ptr(),
            0,
        )
    };
    check(ret).map(|_| status)
}

/// Anonymous private mapping; `MAP_HUGETLB` when `huge`.
pub(crate) fn map_anonymous(len: usize, huge: bool) -> io::Result<*mut u8> {
    let mut flags = libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE;
    if huge {
        flags = libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_HUGETLB;
    }
    // SAFETY: a fresh anonymous mapping at an address of the kernel's
    // choosing aliases nothing.
    let ptr = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            len,
            libc::PROT_READ | libc::PROT_WRITE,
            flags,
            -1,
            0,
        )
    };
    if ptr == libc::MAP_FAILED {
        Err(io::Error::last_os_error())
    } else {
        Ok(ptr.cast())
    }
}

/// # Safety
/// `addr..addr+len` must be a whole mapping from [`map_anonymous`] that
/// nothing references any more.
pub(crate) unsafe fn unmap(addr: *mut u8, len: usize) {
    // SAFETY: guaranteed by the caller. A failure leaks address space only.
    unsafe { libc::munmap(addr.cast(), len) };
}

pub(crate) fn advise(addr: *mut u8, len: usize, advice: libc::c_int) -> io::Result<()> {
    // SAFETY: advice on a mapping this process owns changes no Rust-visible
    // memory (MADV_HUGEPAGE, MADV_POPULATE_WRITE only fault pages in).
    let ret = unsafe { libc::madvise(addr.cast(), len, advice) };
    check(ret as libc::c_long).map(drop)
}

/// The base page size, from the one place that asks the system.
pub(crate) fn page_size() -> usize {
    usize::try_from(numasleuth_kernel::pages::page_size_bytes()).unwrap_or(4096)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn masks_round_trip_beyond_1024_cpus() {
        let ids = vec![0, 63, 64, 1500, 4095];
        let mask = mask_with(&ids, 0);
        assert_eq!(mask.len(), 4096 / WORD_BITS);
        assert_eq!(mask_ids(&mask), ids);
    }

    #[test]
    fn this_thread_has_an_affinity() {
        let cpus = get_affinity().unwrap();
        assert!(!cpus.is_empty());
    }
}
