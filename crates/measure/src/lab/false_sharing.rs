//! False sharing: N threads each increment only their own counter, with
//! the counters either packed side by side (8 per 64-byte line, as a
//! plain `[u64; N]` of per-thread counters would be) or padded to 128
//! bytes each (which also defeats adjacent-line prefetch).
//!
//! No thread ever reads another's counter, so any slowdown of "packed"
//! against "padded" is the cache line bouncing between cores: the cost
//! the talk measured as 29.7 ms growing to 6,520 ms for 10M operations.
//!
//! Two operations: an atomic read-modify-write (`lock xadd` on x86), and a
//! plain increment (`load; add; store`, as a non-atomic `counter += 1`
//! compiles), written with relaxed atomics so every store really happens.

use std::sync::atomic::{AtomicU64, Ordering};

use super::{repeat, run_pinned, Budget, RunSample};
use crate::buffer::{NodeBuffer, PageKind, Placement};
use crate::error::MeasureError;

pub use numasleuth_model::lab::{Layout, Op};

/// Bytes from one counter to the next.
fn stride_bytes(layout: Layout) -> usize {
    match layout {
        Layout::Packed => PACKED_STRIDE_BYTES,
        Layout::Padded => PADDED_STRIDE_BYTES,
    }
}

pub const PACKED_STRIDE_BYTES: usize = 8;
/// Two 64-byte lines: x86 prefetches the adjacent line of a pair, so 64
/// bytes of padding can still leave two counters coupled.
pub const PADDED_STRIDE_BYTES: usize = 128;

/// Operations between checks of the stop flag: small enough that a timed
/// sample overruns by microseconds, large enough that the check is noise.
const BATCH_OPS: u64 = 1024;

/// The counters, in memory bound to one node (where the first thread
/// runs), so every run puts the contended line in the same place.
#[derive(Debug)]
pub struct Counters {
    buffer: NodeBuffer,
    layout: Layout,
    count: usize,
}

impl Counters {
    pub fn allocate(layout: Layout, count: usize, node: u32) -> Result<Self, MeasureError> {
        let bytes = (count.max(1) * stride_bytes(layout)).max(PADDED_STRIDE_BYTES);
        Ok(Counters {
            buffer: NodeBuffer::allocate(bytes, node, PageKind::Small)?,
            layout,
            count,
        })
    }

    pub fn counter(&self, index: usize) -> &AtomicU64 {
        assert!(index < self.count, "counter {index} of {}", self.count);
        // SAFETY: the buffer is page aligned and at least `count × stride`
        // bytes long, the stride is a multiple of 8, and while `self`
        // lives the memory is only accessed through these atomics.
        unsafe {
            &*self
                .buffer
                .as_ptr()
                .add(index * stride_bytes(self.layout))
                .cast::<AtomicU64>()
        }
    }

    pub fn values(&self) -> Vec<u64> {
        (0..self.count)
            .map(|i| self.counter(i).load(Ordering::SeqCst))
            .collect()
    }

    pub fn reset(&self) {
        for i in 0..self.count {
            self.counter(i).store(0, Ordering::SeqCst);
        }
    }

    pub fn placement(&self) -> &Placement {
        self.buffer.placement()
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Config {
    pub layout: Layout,
    pub op: Op,
    /// Worker `i` runs on `cpus[i % len]`.
    pub cpus: Vec<u32>,
    pub threads: usize,
    pub budget: Budget,
    pub samples: usize,
    /// Node whose memory holds the counters.
    pub node: u32,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Outcome {
    pub samples: Vec<RunSample>,
    pub placement: Placement,
}

/// One configuration, `samples` times after a discarded warm-up. After
/// every sample each counter must equal its thread's operation count, or
/// the run is an error: a lost increment would mean the kernel is wrong.
pub fn run(config: &Config) -> Result<Outcome, MeasureError> {
    let counters = Counters::allocate(config.layout, config.threads, config.node)?;
    let op = config.op;
    let samples = repeat(
        config.samples,
        || {
            run_pinned(&config.cpus, config.threads, config.budget, BATCH_OPS, |index| {
                let counter = counters.counter(index);
                Ok(move |ops: u64| increment(counter, op, ops))
            })
        },
        |sample| {
            let values = counters.values();
            counters.reset();
            if values != sample.ops_per_thread {
                return Err(MeasureError::Invalid(format!(
                    "false-sharing counters {values:?} do not match the operations done {:?}",
                    sample.ops_per_thread
                )));
            }
            Ok(())
        },
    )?;
    Ok(Outcome {
        samples,
        placement: counters.placement().clone(),
    })
}

/// `ops` increments of one counter. Relaxed is enough: each counter has
/// one writer, and the count is read only after the threads are joined.
#[inline]
pub fn increment(counter: &AtomicU64, op: Op, ops: u64) {
    match op {
        Op::Atomic => {
            for _ in 0..ops {
                counter.fetch_add(1, Ordering::Relaxed);
            }
        }
        Op::Store => {
            for _ in 0..ops {
                counter.store(counter.load(Ordering::Relaxed) + 1, Ordering::Relaxed);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::affinity;

    fn config(layout: Layout, op: Op, threads: usize, ops: u64) -> Config {
        Config {
            layout,
            op,
            cpus: affinity::allowed_cpus().unwrap(),
            threads,
            budget: Budget::OpsPerThread(ops),
            samples: 2,
            node: 0,
        }
    }

    #[test]
    fn counters_sum_to_threads_times_iterations_for_every_layout_and_op() {
        for layout in Layout::ALL {
            for op in Op::ALL {
                for threads in [1, 2, 3] {
                    let outcome = run(&config(layout, op, threads, 5000)).unwrap();
                    assert_eq!(outcome.samples.len(), 2);
                    for sample in &outcome.samples {
                        assert_eq!(sample.ops_per_thread, vec![5000; threads], "{layout:?} {op:?}");
                        assert_eq!(sample.total_ops(), threads as u64 * 5000);
                    }
                    assert!(outcome.placement.verified, "{:?}", outcome.placement);
                }
            }
        }
    }

    #[test]
    fn packed_counters_share_a_line_and_padded_ones_do_not() {
        let packed = Counters::allocate(Layout::Packed, 8, 0).unwrap();
        let padded = Counters::allocate(Layout::Padded, 2, 0).unwrap();
        let line = |c: &AtomicU64| c as *const AtomicU64 as usize / 64;
        assert!((0..8).all(|i| line(packed.counter(i)) == line(packed.counter(0))));
        let (a, b) = (
            padded.counter(0) as *const _ as usize,
            padded.counter(1) as *const _ as usize,
        );
        assert_eq!(b - a, 128);
        assert_eq!(a % 128, 0);
    }

    #[test]
    fn a_timed_run_counts_match_too() {
        let mut c = config(Layout::Packed, Op::Store, 2, 0);
        c.budget = Budget::Time(std::time::Duration::from_millis(3));
        let outcome = run(&c).unwrap();
        assert!(outcome.samples.iter().all(|s| s.total_ops() > 0));
    }
}
