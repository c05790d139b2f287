//! The contention lab's workloads: false sharing, lock scaling and the
//! remote-global bug, reproduced with real threads on real cache lines.
//!
//! Every experiment runs through [`run_pinned`], on the crate's one
//! thread runner: each worker pins itself to its CPU *inside* the thread, builds its own state there (so first
//! touch puts it on that CPU's node), waits at a start gate, and works in
//! batches until the budget is spent. A sample is the raw count of
//! operations per thread and the wall time they took; rates and verdicts
//! are computed elsewhere (`numasleuth-analyze`), so a run can be replayed.
//!
//! Spinning waits here sleep after a while ([`Backoff`]): with more threads
//! than CPUs (`--oversubscribe`) a waiter that only spins would burn the
//! time slice the lock holder needs, and the run would crawl.

pub mod false_sharing;
pub mod grid;
pub mod lock_bench;
pub mod locks;
pub mod remote_global;

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use crate::error::MeasureError;
use crate::runner::run_gated;

/// How much work one sample does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Budget {
    /// Exactly this many operations per thread (tests: exact sums).
    OpsPerThread(u64),
    /// Until this much wall time has passed (benchmarks: every thread
    /// count gets samples of the same length).
    Time(Duration),
}

/// One sample as measured: no rates, no judgement.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunSample {
    /// From the first worker's start to the last worker's end.
    pub span_ns: u64,
    /// Operations each worker completed, in thread order.
    pub ops_per_thread: Vec<u64>,
    /// CPU time each worker got while it worked (CLOCK_THREAD_CPUTIME_ID);
    /// well below `span_ns` means something else ran on its CPU.
    pub cpu_ns_per_thread: Vec<u64>,
}

impl RunSample {
    pub fn total_ops(&self) -> u64 {
        self.ops_per_thread.iter().sum()
    }
}

/// Spins before a waiter gives up its CPU: tens to hundreds of
/// microseconds of `pause`, far longer than any hand-off between running
/// threads, so it only matters when the thread we wait for is not running.
const SPINS_BEFORE_SLEEP: u32 = 1 << 14;

/// How long a waiter that gave up sleeps before looking again.
const NAP: std::time::Duration = std::time::Duration::from_micros(20);

/// A polite spin: `pause` for a while, then short sleeps. Sleeping rather
/// than `sched_yield`: under EEVDF/CFS a yield often hands the CPU straight
/// back to the yielder, so a preempted lock holder (or the next ticket)
/// could wait a whole time slice; a sleep surely lets it run.
#[derive(Debug, Default)]
pub struct Backoff {
    spins: u32,
}

impl Backoff {
    pub fn snooze(&mut self) {
        if self.spins < SPINS_BEFORE_SLEEP {
            self.spins += 1;
            std::hint::spin_loop();
        } else {
            std::thread::sleep(NAP);
        }
    }
}

/// What the controlling thread and the workers share.
struct Gate {
    ready: AtomicUsize,
    go: AtomicBool,
    abort: AtomicBool,
    stop: AtomicBool,
}

impl Gate {
    fn wait_for_go(&self) -> bool {
        let mut backoff = Backoff::default();
        while !self.go.load(Ordering::Acquire) {
            backoff.snooze();
        }
        !self.abort.load(Ordering::Acquire)
    }
}

/// What one worker reports: operations, start, end, CPU ns used.
type Outcome = Result<Option<(u64, Instant, Instant, u64)>, MeasureError>;

/// CPU time of the calling thread in ns; 0 if the clock is unavailable
/// (then no CPU-share figure can be judged, which callers treat as unknown).
fn thread_cpu_ns() -> u64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: `ts` is a valid, writable timespec; the call only writes it.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    if rc != 0 {
        return 0;
    }
    (ts.tv_sec as u64).saturating_mul(1_000_000_000) + ts.tv_nsec as u64
}

/// Runs `threads` workers, worker `i` pinned to `cpus[i % cpus.len()]`.
///
/// `make(i)` runs inside worker `i` after pinning and returns its batch
/// function; `batch(n)` must do exactly `n` operations. Workers start
/// together once all are pinned and built; if any fails, none works and
/// the first error is returned.
pub fn run_pinned<M, B>(
    cpus: &[u32],
    threads: usize,
    budget: Budget,
    batch_ops: u64,
    make: M,
) -> Result<RunSample, MeasureError>
where
    M: Fn(usize) -> Result<B, MeasureError> + Sync,
    B: FnMut(u64),
{
    if cpus.is_empty() || threads == 0 || batch_ops == 0 {
        return Err(MeasureError::Invalid(
            "a run needs a CPU, a thread and a batch size".into(),
        ));
    }
    let gate = Gate {
        ready: AtomicUsize::new(0),
        go: AtomicBool::new(false),
        abort: AtomicBool::new(false),
        stop: AtomicBool::new(false),
    };
    let workers: Vec<_> = (0..threads)
        .map(|index| {
            let (gate, make) = (&gate, &make);
            let cpu = cpus[index % cpus.len()];
            (cpu, move |pinned| worker(gate, pinned, index, budget, batch_ops, make))
        })
        .collect();
    let ((), outcomes) = run_gated("numasleuth-lab", workers, |running| {
        // Release the workers only when every one is pinned and built, so
        // none measures while another is still setting up. A worker that
        // ended before the start (it panicked) never counts itself ready,
        // so stop waiting for it.
        let mut backoff = Backoff::default();
        while gate.ready.load(Ordering::Acquire) < threads && !running.any_finished() {
            backoff.snooze();
        }
        gate.go.store(true, Ordering::Release);
        if let Budget::Time(duration) = budget {
            std::thread::sleep(duration);
            gate.stop.store(true, Ordering::Release);
        }
    })?;
    let mut finished = Vec::with_capacity(threads);
    let mut first_error = None;
    for outcome in outcomes {
        match outcome {
            Ok(Some(done)) => finished.push(done),
            Ok(None) => {}
            Err(e) => {
                first_error.get_or_insert(e);
            }
        }
    }
    if let Some(e) = first_error {
        return Err(e);
    }
    let start = finished.iter().map(|f| f.1).min();
    let end = finished.iter().map(|f| f.2).max();
    let span_ns = match (start, end) {
        (Some(start), Some(end)) => end.duration_since(start).as_nanos() as u64,
        _ => 0,
    };
    Ok(RunSample {
        span_ns,
        ops_per_thread: finished.iter().map(|f| f.0).collect(),
        cpu_ns_per_thread: finished.iter().map(|f| f.3).collect(),
    })
}

fn worker<M, B>(
    gate: &Gate,
    pinned: Result<(), MeasureError>,
    index: usize,
    budget: Budget,
    batch_ops: u64,
    make: &M,
) -> Outcome
where
    M: Fn(usize) -> Result<B, MeasureError>,
    B: FnMut(u64),
{
    let built = pinned.and_then(|()| make(index));
    if built.is_err() {
        gate.abort.store(true, Ordering::Release);
    }
    gate.ready.fetch_add(1, Ordering::AcqRel);
    let mut batch = built?;
    if !gate.wait_for_go() {
        return Ok(None);
    }
    let (start, cpu_start) = (Instant::now(), thread_cpu_ns());
    let mut done = 0u64;
    match budget {
        Budget::OpsPerThread(total) => {
            while done < total {
                let ops = batch_ops.min(total - done);
                batch(ops);
                done += ops;
            }
        }
        Budget::Time(_) => {
            // At least one batch, even if the stop came while this thread
            // waited for a CPU: a sample with no work has no rate.
            loop {
                batch(batch_ops);
                done += batch_ops;
                if gate.stop.load(Ordering::Relaxed) {
                    break;
                }
            }
        }
    }
    let cpu_ns = thread_cpu_ns().saturating_sub(cpu_start);
    Ok(Some((done, start, Instant::now(), cpu_ns)))
}

/// Runs `samples + 1` samples and drops the first, which warms caches,
/// TLBs and the CPUs' clocks; `between` resets or checks state after each
/// sample (it sees the warm-up too).
pub fn repeat(
    samples: usize,
    mut one: impl FnMut() -> Result<RunSample, MeasureError>,
    mut between: impl FnMut(&RunSample) -> Result<(), MeasureError>,
) -> Result<Vec<RunSample>, MeasureError> {
    let mut kept = Vec::with_capacity(samples);
    for index in 0..=samples {
        let sample = one()?;
        between(&sample)?;
        if index > 0 {
            kept.push(sample);
        }
    }
    Ok(kept)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicU64;

    fn cpus() -> Vec<u32> {
        crate::affinity::allowed_cpus().unwrap()
    }

    #[test]
    fn every_thread_does_exactly_its_budget() {
        let total = AtomicU64::new(0);
        let sample = run_pinned(&cpus(), 3, Budget::OpsPerThread(1000), 64, |_| {
            Ok(|n: u64| {
                total.fetch_add(n, Ordering::Relaxed);
            })
        })
        .unwrap();
        assert_eq!(sample.ops_per_thread, vec![1000, 1000, 1000]);
        assert_eq!(total.load(Ordering::Relaxed), 3000);
    }

    #[test]
    fn a_timed_run_stops_and_counts_what_it_did() {
        let sample = run_pinned(&cpus(), 2, Budget::Time(Duration::from_millis(5)), 16, |_| {
            Ok(|n: u64| {
                std::hint::black_box(n);
            })
        })
        .unwrap();
        assert_eq!(sample.ops_per_thread.len(), 2);
        assert!(sample.ops_per_thread.iter().all(|ops| ops % 16 == 0 && *ops > 0));
        assert!(sample.span_ns > 0);
        assert_eq!(sample.cpu_ns_per_thread.len(), 2);
        // A busy worker uses CPU time, and no more than the wall time.
        assert!(sample
            .cpu_ns_per_thread
            .iter()
            .all(|ns| *ns > 0 && *ns <= sample.span_ns + 1_000_000));
    }

    #[test]
    fn a_worker_that_cannot_start_fails_the_run_without_hanging() {
        let err = run_pinned(&cpus(), 2, Budget::OpsPerThread(10), 1, |index| {
            if index == 1 {
                Err(MeasureError::Invalid("no state for worker 1".into()))
            } else {
                Ok(|_: u64| {})
            }
        })
        .unwrap_err();
        assert!(err.to_string().contains("worker 1"), "{err}");
        let err = run_pinned(&[1 << 20], 1, Budget::OpsPerThread(1), 1, |_| Ok(|_: u64| {})).unwrap_err();
        assert!(err.to_string().contains("cannot pin"), "{err}");
    }

    #[test]
    fn repeat_drops_the_warm_up() {
        let mut calls = 0;
        let kept = repeat(
            2,
            || {
                calls += 1;
                Ok(RunSample {
                    span_ns: calls,
                    ops_per_thread: vec![1],
                    cpu_ns_per_thread: vec![1],
                })
            },
            |_| Ok(()),
        )
        .unwrap();
        assert_eq!(kept.iter().map(|s| s.span_ns).collect::<Vec<_>>(), vec![2, 3]);
    }
}
