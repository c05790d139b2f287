//! Why a watch could not start, in words a person can act on.
//!
//! `perf_event_open` answers with a bare errno; the same EACCES means
//! "perf is locked down on this machine" or "that process is another
//! user's", and ENOSPC means the CPU's few debug registers are taken. Each
//! is turned into the reason and the fix here, once.

use thiserror::Error;

#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum ProbeError {
    #[error("{}", permission_text(*pid, *paranoid))]
    PermissionDenied { pid: u32, paranoid: Option<i32> },
    #[error(
        "no free hardware debug register for thread {tid} of process {pid} (ENOSPC): x86 has 4 debug \
         registers per thread, shared by every watchpoint on it (another `numasleuth watch`, gdb \
         hardware watchpoints, `perf record -e mem:…`), so a 5th concurrent watch fails; stop one and retry"
    )]
    DebugRegistersBusy { pid: u32, tid: u32 },
    #[error("no such process: {pid} (it does not exist or has exited)")]
    NoSuchProcess { pid: u32 },
    #[error(
        "the kernel refused a {len_bytes}-byte watchpoint at {address:#x} (EINVAL): the address must be a \
         user-space address aligned to the length (1, 2, 4 or 8 bytes)"
    )]
    InvalidBreakpoint { address: u64, len_bytes: u64 },
    #[error(
        "hardware breakpoints are not available here ({why}): the kernel lacks \
         CONFIG_HAVE_HW_BREAKPOINT or the hypervisor hides the debug registers"
    )]
    Unsupported { why: String },
    #[error(
        "process {pid} has more threads than the open-file limit allows (one perf event per thread); \
         raise it with `ulimit -n`"
    )]
    TooManyThreads { pid: u32 },
    #[error("a watch of {seconds} s cannot be scheduled: the clock would overflow")]
    DurationOutOfRange { seconds: u64 },
    #[error("perf_event_open on thread {tid} of process {pid}: {message}")]
    Other { pid: u32, tid: u32, message: String },
}

/// Debian and Android add level 3 ("no perf events without CAP_PERFMON");
/// below it the usual cause is ptrace rights over another user's process.
fn permission_text(pid: u32, paranoid: Option<i32>) -> String {
    match paranoid {
        Some(level) if level >= 3 => format!(
            "cannot watch process {pid}: permission denied: kernel.perf_event_paranoid is {level} \
             (/proc/sys/kernel/perf_event_paranoid), which forbids perf events without CAP_PERFMON; \
             run as root or `sysctl kernel.perf_event_paranoid=1`"
        ),
        level => {
            let shown = paranoid_shown(level);
            format!(
                "cannot watch process {pid}: permission denied: a watchpoint on another user's process \
                 needs ptrace rights over it (run as that user, or as root / with CAP_SYS_PTRACE; \
                 kernel.yama.ptrace_scope may also forbid it); kernel.perf_event_paranoid is {shown} \
                 (at 3 or more every watch needs root or `sysctl kernel.perf_event_paranoid=1`)"
            )
        }
    }
}

/// `kernel.perf_event_paranoid` as messages show it: unreadable is "unknown".
pub fn paranoid_shown(level: Option<i32>) -> String {
    level.map_or_else(|| "unknown".to_string(), |l| l.to_string())
}

/// What one failed `perf_event_open` means. `tid` is the thread it was
/// for; an ESRCH there is handled by the caller (threads come and go).
pub fn classify(
    error: &std::io::Error,
    pid: u32,
    tid: u32,
    address: u64,
    len_bytes: u64,
    paranoid: Option<i32>,
) -> ProbeError {
    match error.raw_os_error() {
        Some(libc::EACCES) | Some(libc::EPERM) => ProbeError::PermissionDenied { pid, paranoid },
        Some(libc::ENOSPC) => ProbeError::DebugRegistersBusy { pid, tid },
        Some(libc::ESRCH) => ProbeError::NoSuchProcess { pid },
        Some(libc::EINVAL) => ProbeError::InvalidBreakpoint { address, len_bytes },
        Some(libc::ENOENT) | Some(libc::ENODEV) | Some(libc::EOPNOTSUPP) | Some(libc::ENOSYS) => {
            ProbeError::Unsupported { why: error.to_string() }
        }
        Some(libc::EMFILE) | Some(libc::ENFILE) => ProbeError::TooManyThreads { pid },
        _ => ProbeError::Other {
            pid,
            tid,
            message: error.to_string(),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(errno: i32) -> ProbeError {
        classify(&std::io::Error::from_raw_os_error(errno), 7, 8, 0x1000, 8, Some(2))
    }

    #[test]
    fn each_errno_has_its_reason() {
        assert_eq!(err(libc::ENOSPC), ProbeError::DebugRegistersBusy { pid: 7, tid: 8 });
        assert_eq!(err(libc::ESRCH), ProbeError::NoSuchProcess { pid: 7 });
        assert_eq!(
            err(libc::EINVAL),
            ProbeError::InvalidBreakpoint {
                address: 0x1000,
                len_bytes: 8
            }
        );
        assert!(matches!(err(libc::ENOENT), ProbeError::Unsupported { .. }));
        assert_eq!(err(libc::EMFILE), ProbeError::TooManyThreads { pid: 7 });
        assert!(matches!(err(libc::EIO), ProbeError::Other { tid: 8, .. }));
    }

    #[test]
    fn debug_register_message_names_the_limit() {
        let text = err(libc::ENOSPC).to_string();
        assert!(
            text.contains("4 debug registers") && text.contains("5th concurrent watch"),
            "{text}"
        );
    }

    #[test]
    fn paranoid_3_says_the_sysctl() {
        let text = ProbeError::PermissionDenied {
            pid: 9,
            paranoid: Some(3),
        }
        .to_string();
        assert!(text.contains("kernel.perf_event_paranoid is 3"), "{text}");
        assert!(
            text.contains("run as root or `sysctl kernel.perf_event_paranoid=1`"),
            "{text}"
        );
        let text = err(libc::EACCES).to_string();
        assert!(text.contains("another user's process needs ptrace rights"), "{text}");
        assert!(text.contains("kernel.perf_event_paranoid is 2"), "{text}");
    }
}
