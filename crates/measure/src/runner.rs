//! The one way measurement threads start: every collector (latency,
//! bandwidth, loaded latency, core-to-core, the lab's workloads) hands its
//! per-thread work to [`run_gated`].
//!
//! Each thread waits at a start gate before doing anything, so the caller
//! can still call the run off if the OS refuses a later thread: then the
//! gate is aborted, the threads already started return at once without
//! having touched a barrier or a buffer, and the caller gets the error
//! instead of a panic or a hang. Once every thread exists the gate opens,
//! each thread pins itself to its CPU *inside* the thread (so its first
//! touches land on that CPU's node), and its work is handed the outcome
//! of pinning to report as it sees fit.

use std::thread::ScopedJoinHandle;

use crate::affinity;
use crate::error::MeasureError;
use crate::gate::{spawn_failed, StartGate};

/// The running threads, as the controlling closure may ask about them.
pub(crate) struct Running<'a, 'scope, T> {
    handles: &'a [ScopedJoinHandle<'scope, Option<T>>],
}

impl<T> Running<'_, '_, T> {
    /// Whether any thread has already returned (or panicked): a
    /// controller waiting for every thread to check in stops waiting.
    pub(crate) fn any_finished(&self) -> bool {
        self.handles.iter().any(|h| h.is_finished())
    }
}

/// Runs each `(cpu, work)` on its own thread named `label-N`, pinned to
/// `cpu`, once all are started; `control` runs on the calling thread
/// meanwhile (to drive barriers, time rounds, or just return). Returns
/// what `control` returned and each thread's result, in order.
pub(crate) fn run_gated<T, R, W, C>(
    label: &str,
    workers: Vec<(u32, W)>,
    control: C,
) -> Result<(R, Vec<T>), MeasureError>
where
    T: Send,
    W: FnOnce(Result<(), MeasureError>) -> T + Send,
    C: FnOnce(&Running<'_, '_, T>) -> R,
{
    let gate = StartGate::default();
    std::thread::scope(|scope| {
        let mut handles = Vec::with_capacity(workers.len());
        for (index, (cpu, work)) in workers.into_iter().enumerate() {
            let gate = &gate;
            let spawned = std::thread::Builder::new()
                .name(format!("{label}-{index}"))
                .spawn_scoped(scope, move || {
                    if !gate.wait() {
                        return None;
                    }
                    Some(work(affinity::pin_current_thread(cpu)))
                });
            match spawned {
                Ok(handle) => handles.push(handle),
                Err(error) => {
                    gate.abort();
                    return Err(spawn_failed(error));
                }
            }
        }
        gate.open();
        let controlled = control(&Running { handles: &handles });
        let mut results = Vec::with_capacity(handles.len());
        for handle in handles {
            match handle.join() {
                Ok(Some(result)) => results.push(result),
                // Only an aborted gate returns None, and then we returned above.
                Ok(None) => return Err(MeasureError::Thread("a measurement thread was called off".into())),
                Err(_) => return Err(MeasureError::Thread("a measurement thread panicked".into())),
            }
        }
        Ok((controlled, results))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    #[test]
    fn every_worker_runs_pinned_and_in_order() {
        let cpus = affinity::allowed_cpus().unwrap();
        let ran = AtomicUsize::new(0);
        let workers: Vec<_> = cpus
            .iter()
            .map(|&cpu| {
                let ran = &ran;
                (cpu, move |pinned: Result<(), MeasureError>| {
                    pinned.unwrap();
                    ran.fetch_add(1, Ordering::SeqCst);
                    crate::sys::get_affinity().unwrap()
                })
            })
            .collect();
        let (controlled, seen) = run_gated("test", workers, |_| 7).unwrap();
        assert_eq!(controlled, 7);
        assert_eq!(ran.load(Ordering::SeqCst), cpus.len());
        let expected: Vec<Vec<u32>> = cpus.iter().map(|&c| vec![c]).collect();
        assert_eq!(seen, expected);
    }

    #[test]
    fn a_cpu_that_cannot_be_pinned_reaches_the_work_as_an_error() {
        let workers = vec![(1u32 << 20, |pinned: Result<(), MeasureError>| pinned.is_err())];
        let ((), seen) = run_gated("test", workers, |_| ()).unwrap();
        assert_eq!(seen, vec![true]);
    }

    #[test]
    fn a_panicking_worker_is_an_error_not_a_panic() {
        let workers = vec![(
            affinity::allowed_cpus().unwrap()[0],
            |_: Result<(), MeasureError>| -> u32 { panic!("worker fails on purpose") },
        )];
        let err = run_gated("test", workers, |running| {
            while !running.any_finished() {
                std::thread::yield_now();
            }
        })
        .unwrap_err();
        assert!(err.to_string().contains("panicked"), "{err}");
    }
}
