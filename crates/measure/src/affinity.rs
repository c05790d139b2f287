//! Pinning: every measurement thread pins itself (inside the thread, before
//! it touches its data) so the kernel cannot migrate it mid-sample.

use crate::error::MeasureError;
use crate::sys;

/// Pins the calling thread to `cpu`.
pub fn pin_current_thread(cpu: u32) -> Result<(), MeasureError> {
    sys::set_affinity(cpu).map_err(|e| MeasureError::Pin {
        cpu,
        reason: match e.raw_os_error() {
            Some(libc::EINVAL) => "the CPU is offline or outside this process's cpuset".to_string(),
            _ => e.to_string(),
        },
    })
}

/// The CPUs the calling thread may run on (`sched_getaffinity`), which is
/// what pinning can actually reach, whatever the cgroup files say.
pub fn allowed_cpus() -> Result<Vec<u32>, MeasureError> {
    sys::get_affinity().map_err(|e| MeasureError::Affinity(e.to_string()))
}

/// Runs `f` on a thread pinned to `cpu` (started through the one
/// measurement runner), so the caller's own affinity is left as it was.
pub fn on_cpu<T: Send>(cpu: u32, f: impl FnOnce() -> T + Send) -> Result<T, MeasureError> {
    let work = move |pinned: Result<(), MeasureError>| pinned.map(|()| f());
    let ((), mut results) = crate::runner::run_gated("numasleuth-cpu", vec![(cpu, work)], |_| ())?;
    results
        .pop()
        .unwrap_or_else(|| Err(MeasureError::Thread("the measurement thread returned nothing".into())))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pins_to_an_allowed_cpu_and_reports_it() {
        let cpu = allowed_cpus().unwrap()[0];
        let seen = on_cpu(cpu, || sys::get_affinity().unwrap()).unwrap();
        assert_eq!(seen, vec![cpu]);
    }

    #[test]
    fn pinning_to_an_impossible_cpu_is_an_error_not_a_panic() {
        let err = on_cpu(1 << 20, || ()).unwrap_err();
        assert!(err.to_string().contains("cannot pin to CPU"), "{err}");
    }
}
