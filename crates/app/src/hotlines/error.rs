//! Why `hotlines` (and `doctor -p`'s sampling) could not sample a process,
//! in `hotlines`' words.

use numasleuth_kernel::procfs::process::ProcessError;
use numasleuth_probe::ProbeError;

#[derive(Debug, thiserror::Error)]
pub enum HotlinesError {
    #[error("hotlines needs the live system: it samples a running process, which a snapshot (--root) is not")]
    NotLive,
    #[error("process {pid} is a kernel thread: it has no user code or memory to sample")]
    KernelThread { pid: u32 },
    #[error(transparent)]
    Process(#[from] ProcessError),
    #[error("hotlines ip-decode decodes x86-64 and aarch64 only, not this build's architecture ({why})")]
    NoDecoder { why: String },
    #[error("{why}; use --method ip-decode")]
    NoPrecise { why: String },
    /// The errno texts are the watchpoint's; this says what was refused.
    #[error("the kernel refused the {method} sampling event ({why}); try --method ip-decode")]
    Refused { method: String, why: String },
    #[error("{}", refused_text(*pid, *paranoid))]
    PermissionDenied { pid: u32, paranoid: Option<i32> },
    #[error(transparent)]
    Probe(ProbeError),
    #[error(transparent)]
    OutOfRange(#[from] crate::limits::OutOfRange),
}

impl HotlinesError {
    /// perf's refusals in `hotlines`' words.
    pub(super) fn sampling(e: ProbeError, method: &str) -> HotlinesError {
        match e {
            ProbeError::PermissionDenied { pid, paranoid } => HotlinesError::PermissionDenied { pid, paranoid },
            ProbeError::Unsupported { why } => HotlinesError::Refused {
                method: method.to_string(),
                why,
            },
            ProbeError::InvalidBreakpoint { .. } => HotlinesError::Refused {
                method: method.to_string(),
                why: "EINVAL".to_string(),
            },
            other => HotlinesError::Probe(other),
        }
    }
}

/// perf's EACCES, in `hotlines`' words: user-only timer samples of one's
/// own process are allowed up to perf_event_paranoid 2.
fn refused_text(pid: u32, paranoid: Option<i32>) -> String {
    match paranoid {
        Some(level) if level >= 3 => format!(
            "cannot sample process {pid}: permission denied: kernel.perf_event_paranoid is {level} \
             (/proc/sys/kernel/perf_event_paranoid), which forbids perf events without CAP_PERFMON; \
             run as root or `sysctl kernel.perf_event_paranoid=2`"
        ),
        level => format!(
            "cannot sample process {pid}: permission denied: sampling another user's process needs ptrace \
             rights over it (run as that user, or as root / with CAP_SYS_PTRACE; kernel.yama.ptrace_scope \
             may also forbid it); kernel.perf_event_paranoid is {} (at 3 or more every sample needs root \
             or `sysctl kernel.perf_event_paranoid=2`)",
            numasleuth_probe::error::paranoid_shown(level)
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_refusal_names_the_sysctl_or_the_ptrace_rights() {
        let refused = |paranoid| {
            HotlinesError::sampling(ProbeError::PermissionDenied { pid: 9, paranoid }, "ip-decode").to_string()
        };
        let text = refused(Some(3));
        assert!(text.contains("kernel.perf_event_paranoid is 3"), "{text}");
        assert!(text.contains("`sysctl kernel.perf_event_paranoid=2`"), "{text}");
        let text = refused(None);
        assert!(text.contains("another user's process needs ptrace rights"), "{text}");
        assert!(text.contains("kernel.perf_event_paranoid is unknown"), "{text}");
        let text = HotlinesError::sampling(ProbeError::Unsupported { why: "ENOENT".into() }, "precise").to_string();
        assert_eq!(
            text,
            "the kernel refused the precise sampling event (ENOENT); try --method ip-decode"
        );
    }
}
