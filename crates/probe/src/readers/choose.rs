//! Which method a watch uses: the one asked for, or the best that works
//! here, with why each better one could not be used.

use numasleuth_kernel::Root;
use numasleuth_model::readers::Method;

use super::error::{NoPerf, StartError};
use super::fdscan::Scanner;
use super::perf::PerfSource;
use super::{Choice, Setup, Source};

fn is_root() -> bool {
    numasleuth_kernel::identity::is_root()
}

/// The method `setup.choice` asks for, or the best one that works.
pub(crate) fn pick(root: &Root, setup: &Setup) -> Result<(Method, Source), StartError> {
    let interval_ms = setup.scan_interval.as_millis() as u64;
    let scan = |reason: String| -> Result<(Method, Source), StartError> {
        if !is_root() {
            return Err(StartError::ScanNeedsRoot { reason });
        }
        Ok((
            Method::FdScan { interval_ms, reason },
            Source::Scan {
                scanner: Scanner::new(root.clone(), &setup.files),
                last: None,
            },
        ))
    };
    let tracepoint = |why_not_kprobe: String| {
        PerfSource::syscalls(root, &setup.files, &setup.cpus)
            .map(|p| (Method::Tracepoint { why_not_kprobe }, Source::Perf(p)))
    };
    match setup.choice {
        Choice::Kprobe => PerfSource::kprobes(root, &setup.files, &setup.cpus)
            .map(|p| (Method::Kprobe, Source::Perf(p)))
            .map_err(StartError::Kprobe),
        Choice::Tracepoint => tracepoint("--method tracepoint was asked for".into()).map_err(StartError::Tracepoint),
        Choice::FdScan => scan("--method fd-scan was asked for".into()),
        Choice::Auto => match PerfSource::kprobes(root, &setup.files, &setup.cpus) {
            Ok(p) => Ok((Method::Kprobe, Source::Perf(p))),
            Err(kprobe) => {
                tracepoint(kprobe.to_string()).or_else(|tracepoint| scan(NoPerf { kprobe, tracepoint }.to_string()))
            }
        },
    }
}
