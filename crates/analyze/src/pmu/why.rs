//! Why `perf_event_open` refused an event, from its errno.
//!
//! The kernel answers with a bare errno, and the same one means different
//! things for different events; these are the readings the perf tool and
//! the man page give, with the errno kept in the text so it can be looked
//! up.

use numasleuth_model::perf::errno::Errno;
use numasleuth_model::perf::pmu::OpenFailure;

pub fn why_unavailable(failure: &OpenFailure, paranoid: Option<i32>, fd_limit: u64) -> String {
    let name = failure.errno_name();
    let Some(errno) = failure.errno() else {
        return format!("{} ({name})", failure.message);
    };
    match errno {
        Errno::NoEntry | Errno::NotSupported | Errno::NoDevice | Errno::NoSys => {
            format!("not on this CPU or VM ({name}): the kernel has no counter for this event here")
        }
        Errno::Access | Errno::Perm => {
            let level = paranoid.map_or_else(|| "unknown".into(), |p| p.to_string());
            format!(
                "permission denied ({name}): kernel.perf_event_paranoid is {level}; this event needs root or \
                 CAP_PERFMON (or `sysctl kernel.perf_event_paranoid=1`), and another user's process also needs \
                 ptrace rights over it"
            )
        }
        Errno::Invalid => format!(
            "the kernel rejected this configuration ({name}): a field is out of range for this CPU, or the PMU \
             cannot count a single process"
        ),
        Errno::NoSpace => format!("no counter could ever hold this event ({name}), even alone"),
        Errno::TooManyFiles | Errno::FileTable => format!(
            "too many open files ({name}): one descriptor per event and thread, limit {fd_limit}; raise `ulimit -n` \
             or count fewer events (--events)"
        ),
        Errno::NoProcess => format!("the process or its threads exited before the event was attached ({name})"),
        Errno::Busy => format!("the PMU is held exclusively by another user ({name})"),
        Errno::TooBig => format!("the kernel is older than this request ({name})"),
        Errno::Overflow => format!("the kernel cannot handle this request ({name})"),
        Errno::Other(_) => format!("{} ({name})", failure.message),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use numasleuth_model::perf::pmu::EventSpec;

    fn failure(errno: Errno, message: &str) -> OpenFailure {
        OpenFailure {
            spec: EventSpec {
                name: "cycles".into(),
                pmu: "hardware".into(),
                type_id: 0,
                config: 0,
                config1: 0,
                config2: 0,
                config3: 0,
            },
            errno: Some(errno.raw()),
            message: message.into(),
        }
    }

    #[test]
    fn each_errno_reads_as_a_reason() {
        assert!(why_unavailable(&failure(Errno::NoEntry, ""), None, 1024).starts_with("not on this CPU or VM (ENOENT)"));
        assert!(why_unavailable(&failure(Errno::NotSupported, ""), None, 1024).contains("not on this CPU or VM"));
        let denied = why_unavailable(&failure(Errno::Access, ""), Some(3), 1024);
        assert!(denied.contains("kernel.perf_event_paranoid is 3"), "{denied}");
        assert!(why_unavailable(&failure(Errno::Perm, ""), None, 1024).contains("paranoid is unknown"));
        assert!(why_unavailable(&failure(Errno::TooManyFiles, ""), None, 4096).contains("limit 4096"));
        assert!(why_unavailable(&failure(Errno::Invalid, ""), None, 1).contains("(EINVAL)"));
        assert!(why_unavailable(&failure(Errno::NoSpace, ""), None, 1).contains("(ENOSPC)"));
        assert_eq!(
            why_unavailable(&failure(Errno::Other(5), "Input/output error (os error 5)"), None, 1),
            "Input/output error (os error 5) (errno)"
        );
        let no_number = OpenFailure {
            errno: None,
            ..failure(Errno::Other(5), "counter did not start")
        };
        assert_eq!(why_unavailable(&no_number, None, 1), "counter did not start (error)");
    }
}
