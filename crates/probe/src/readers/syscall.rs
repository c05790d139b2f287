//! The `syscalls:sys_enter_open*` tracepoints as a way to see opens of the
//! lock files, where the kernel has no kprobe PMU.
//!
//! The tracepoint records the *address* of the file name in the opener's
//! memory, not the name. Two things make that usable:
//! - an ftrace filter (`filename.ustring ~ "*slabinfo"`, Linux 5.17 on)
//!   makes the kernel read the name itself and drop every other open
//!   before it costs a sample, so only opens of the watched names reach us;
//! - each sample carries the opener's stack pointer and the top of its
//!   stack (`PERF_SAMPLE_STACK_USER`). A name passed on the command line
//!   (`cat /proc/slabinfo`) or built in a local buffer lies there, so it
//!   is read from the sample even when the process has already exited.
//!   A name elsewhere (a string literal, the heap) is read from the live
//!   process with `process_vm_readv`; a process that exited before that
//!   leaves an open whose file is unknown, which is counted and said.

use numasleuth_model::readers::LockFile;

/// The open syscalls whose entry is watched, where the kernel has them.
pub const EVENTS: [&str; 3] = [
    "syscalls/sys_enter_openat",
    "syscalls/sys_enter_open",
    "syscalls/sys_enter_openat2",
];
/// Bytes of user stack copied with each sample: enough to reach the
/// argument strings above a small program's frames (`cat`, `ss`), and
/// affordable because the filter keeps samples rare.
pub const STACK_DUMP_BYTES: u32 = 16 * 1024;
/// Longest name read (PATH_MAX).
pub const MAX_NAME_BYTES: usize = 4096;
/// The stack pointer in `PERF_SAMPLE_REGS_USER` (perf_regs.h).
#[cfg(target_arch = "x86_64")]
pub const SP_REGS_MASK: u64 = 1 << 7;
#[cfg(target_arch = "aarch64")]
pub const SP_REGS_MASK: u64 = 1 << 31;
#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
pub const SP_REGS_MASK: u64 = 0;

/// The ftrace filter that keeps only opens of `files`' names: each name
/// as the end of the path, so relative opens (`slabinfo` from /proc) pass
/// too; what is not really the file is dropped later by
/// [`LockFile::classify`].
pub fn filter(files: &[LockFile]) -> String {
    files
        .iter()
        .map(|f| format!("filename.ustring ~ \"*{}\"", f.name()))
        .collect::<Vec<_>>()
        .join(" || ")
}

/// The NUL-terminated string at `pointer`, if it lies inside the stack
/// copy that starts at `sp`.
pub fn string_in_stack(pointer: u64, sp: u64, stack: &[u8]) -> Option<String> {
    let at = usize::try_from(pointer.checked_sub(sp)?).ok()?;
    let rest = stack.get(at..)?;
    let end = rest.iter().take(MAX_NAME_BYTES).position(|b| *b == 0)?;
    Some(String::from_utf8_lossy(&rest[..end]).into_owned())
}

/// The NUL-terminated string at `pointer` in process `pid`, read page by
/// page so a name ending just before an unmapped page is still read.
pub fn read_user_string(pid: u32, pointer: u64) -> Option<String> {
    let mut bytes: Vec<u8> = Vec::new();
    let mut at = pointer;
    while bytes.len() < MAX_NAME_BYTES {
        let to_page_end = 4096 - (at % 4096) as usize;
        let want = to_page_end.min(MAX_NAME_BYTES - bytes.len());
        let mut chunk = vec![0u8; want];
        let local = libc::iovec {
            iov_base: chunk.as_mut_ptr().cast(),
            iov_len: want,
        };
        let remote = libc::iovec {
            iov_base: at as *mut libc::c_void,
            iov_len: want,
        };
        // SAFETY: `local` describes `chunk`, which is `want` bytes long and
        // lives across the call; the remote address is only read by the
        // kernel, which checks it against the other process's mappings.
        let got = unsafe { libc::process_vm_readv(pid as libc::pid_t, &local, 1, &remote, 1, 0) };
        let got = usize::try_from(got).ok().filter(|g| *g > 0)?;
        chunk.truncate(got);
        if let Some(end) = chunk.iter().position(|b| *b == 0) {
            bytes.extend_from_slice(&chunk[..end]);
            return Some(String::from_utf8_lossy(&bytes).into_owned());
        }
        bytes.extend_from_slice(&chunk);
        at = at.checked_add(got as u64)?;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_filter_names_every_file() {
        assert_eq!(
            filter(&[LockFile::Slabinfo, LockFile::SmapsRollup]),
            "filename.ustring ~ \"*slabinfo\" || filename.ustring ~ \"*smaps_rollup\""
        );
        assert!(filter(&LockFile::ALL).len() < crate::tracepoint::MAX_FILTER_BYTES);
    }

    #[test]
    fn names_inside_and_outside_the_stack_copy() {
        let mut stack = vec![0xAAu8; 64];
        stack[40..55].copy_from_slice(b"/proc/slabinfo\0");
        assert_eq!(
            string_in_stack(0x1000 + 40, 0x1000, &stack).as_deref(),
            Some("/proc/slabinfo")
        );
        assert_eq!(string_in_stack(0x0fff, 0x1000, &stack), None, "below sp");
        assert_eq!(string_in_stack(0x1000 + 64, 0x1000, &stack), None, "past the copy");
        // No NUL before the copy ends: not a name we can trust.
        assert_eq!(string_in_stack(0x1000 + 56, 0x1000, &stack), None);
        assert_eq!(string_in_stack(u64::MAX, 0, &stack), None);
    }

    #[test]
    fn a_name_is_read_from_a_live_process() {
        let name = std::ffi::CString::new("/proc/slabinfo").unwrap();
        let me = std::process::id();
        assert_eq!(
            read_user_string(me, name.as_ptr() as u64).as_deref(),
            Some("/proc/slabinfo")
        );
        assert_eq!(read_user_string(me, 8), None, "an unmapped address");
    }
}
