//! Lock scaling, the talk's micro-benchmark: N threads take and release
//! one lock as fast as they can, counting lock/unlock pairs.
//!
//! Four contenders: the [`TicketLock`] and [`McsLock`] from `locks`,
//! `std::sync::Mutex` (a futex lock that sleeps instead of spinning), and
//! a bare atomic fetch-add, the floor any lock must pay for moving one
//! line. The critical section is either empty or holds "1 load": an
//! atomic add on a word in the lock's own cache line, the case where the
//! talk's ticket lock fell furthest behind.
//!
//! The lock lives in memory bound to a chosen node, so the line's home is
//! the same in every run.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, PoisonError};

use super::locks::{McsLock, McsNode, TicketLock};
use super::{repeat, run_pinned, Budget, RunSample};
use crate::buffer::{NodeBuffer, PageKind, Placement};
use crate::error::MeasureError;

pub use numasleuth_model::lab::{Load, LockKind};

/// Lock/unlock pairs between checks of the stop flag; a contended pair
/// can take microseconds, so batches stay small.
const BATCH_OPS: u64 = 64;

#[derive(Debug, Clone, PartialEq)]
pub struct Config {
    pub lock: LockKind,
    pub load: Load,
    pub cpus: Vec<u32>,
    pub threads: usize,
    pub budget: Budget,
    pub samples: usize,
    /// Node whose memory holds the lock.
    pub node: u32,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Outcome {
    pub samples: Vec<RunSample>,
    pub placement: Placement,
    /// True when a counter the workload keeps (the one-load word, or the
    /// atomic itself) matched the operations done after every sample;
    /// `None` when the workload keeps no counter (an empty section).
    pub count_verified: Option<bool>,
}

/// A value constructed inside a page bound to a node.
struct Placed<T> {
    buffer: NodeBuffer,
    value: *mut T,
}

impl<T> Placed<T> {
    fn new(value: T, node: u32) -> Result<Self, MeasureError> {
        let page = crate::sys::page_size();
        if std::mem::size_of::<T>() > page || std::mem::align_of::<T>() > page {
            return Err(MeasureError::Invalid("a lab lock must fit one page".into()));
        }
        let buffer = NodeBuffer::allocate(page, node, PageKind::Small)?;
        let slot = buffer.as_ptr().cast::<T>();
        // SAFETY: the mapping is page aligned, one page long (checked to
        // fit `T`), writable, and holds no value yet.
        unsafe { slot.write(value) };
        Ok(Placed { buffer, value: slot })
    }

    fn get(&self) -> &T {
        // SAFETY: written in `new`, dropped only in `drop`.
        unsafe { &*self.value }
    }
}

impl<T> Drop for Placed<T> {
    fn drop(&mut self) {
        // SAFETY: the value was written in `new` and is dropped once, here,
        // before the buffer unmaps (fields drop after this body).
        unsafe { self.value.drop_in_place() };
    }
}

/// The bare atomic and its one-load neighbour, on one line.
#[repr(C, align(128))]
#[derive(Debug, Default)]
struct AtomicFloor {
    word: AtomicU64,
    payload: AtomicU64,
}

/// `std::sync::Mutex` padded so its futex word and the payload own a line.
#[repr(C, align(128))]
#[derive(Debug, Default)]
struct PaddedMutex(Mutex<AtomicU64>);

type Batch<'a> = Box<dyn FnMut(u64) + 'a>;

/// One configuration, `samples` times after a discarded warm-up.
pub fn run(config: &Config) -> Result<Outcome, MeasureError> {
    let one_load = config.load == Load::OneLoad;
    match config.lock {
        LockKind::Ticket => {
            let lock = Placed::new(TicketLock::new(AtomicU64::new(0)), config.node)?;
            let lock = (lock.get(), lock.buffer.placement());
            let mut count = || drain(&lock.0.lock());
            bench(config, lock.1, one_load.then_some(&mut count), |_| {
                Box::new(move |ops| {
                    for _ in 0..ops {
                        let guard = lock.0.lock();
                        if one_load {
                            guard.fetch_add(1, Ordering::Relaxed);
                        }
                    }
                })
            })
        }
        LockKind::Mcs => {
            let lock = Placed::new(McsLock::new(AtomicU64::new(0)), config.node)?;
            let lock = (lock.get(), lock.buffer.placement());
            let mut own_node = McsNode::new();
            let mut count = || drain(&lock.0.lock(&mut own_node));
            bench(config, lock.1, one_load.then_some(&mut count), |_| {
                // Built inside the pinned worker, so the node is local.
                let mut node = Box::new(McsNode::new());
                Box::new(move |ops| {
                    for _ in 0..ops {
                        let guard = lock.0.lock(&mut node);
                        if one_load {
                            guard.fetch_add(1, Ordering::Relaxed);
                        }
                    }
                })
            })
        }
        LockKind::Mutex => {
            let lock = Placed::new(PaddedMutex::default(), config.node)?;
            let lock = (&lock.get().0, lock.buffer.placement());
            let mut count = || drain(&lock.0.lock().unwrap_or_else(PoisonError::into_inner));
            bench(config, lock.1, one_load.then_some(&mut count), |_| {
                Box::new(move |ops| {
                    for _ in 0..ops {
                        let guard = lock.0.lock().unwrap_or_else(PoisonError::into_inner);
                        if one_load {
                            guard.fetch_add(1, Ordering::Relaxed);
                        }
                    }
                })
            })
        }
        LockKind::Atomic => {
            let floor = Placed::new(AtomicFloor::default(), config.node)?;
            let floor = (floor.get(), floor.buffer.placement());
            // The fetch-adds are their own count, with or without the load.
            let mut count = || {
                let payload = drain(&floor.0.payload);
                let word = drain(&floor.0.word);
                if one_load && payload != word {
                    u64::MAX
                } else {
                    word
                }
            };
            bench(config, floor.1, Some(&mut count), |_| {
                Box::new(move |ops| {
                    for _ in 0..ops {
                        floor.0.word.fetch_add(1, Ordering::Relaxed);
                        if one_load {
                            floor.0.payload.fetch_add(1, Ordering::Relaxed);
                        }
                    }
                })
            })
        }
    }
}

/// Reads a counter and zeroes it for the next sample.
fn drain(word: &AtomicU64) -> u64 {
    word.swap(0, Ordering::SeqCst)
}

/// Runs the samples. When the workload keeps a counter, `count` reads and
/// resets it after each sample, and it must equal the operations done:
/// an increment lost inside a critical section means exclusion failed.
fn bench<'a>(
    config: &Config,
    placement: &Placement,
    mut count: Option<&mut dyn FnMut() -> u64>,
    make: impl Fn(usize) -> Batch<'a> + Sync,
) -> Result<Outcome, MeasureError> {
    let samples = repeat(
        config.samples,
        || run_pinned(&config.cpus, config.threads, config.budget, BATCH_OPS, |i| Ok(make(i))),
        |sample| match count.as_mut() {
            Some(count) => {
                let counted = count();
                if counted == sample.total_ops() {
                    Ok(())
                } else {
                    Err(MeasureError::Invalid(format!(
                        "the {} lock counted {counted} operations where {} were done: mutual exclusion failed",
                        config.lock.name(),
                        sample.total_ops()
                    )))
                }
            }
            None => Ok(()),
        },
    )?;
    Ok(Outcome {
        samples,
        placement: placement.clone(),
        count_verified: count.map(|_| true),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::affinity;

    #[test]
    fn every_lock_and_load_runs_and_counts_exactly() {
        let cpus = affinity::allowed_cpus().unwrap();
        for lock in LockKind::ALL {
            for load in Load::ALL {
                let config = Config {
                    lock,
                    load,
                    cpus: cpus.clone(),
                    threads: 2,
                    budget: Budget::OpsPerThread(2000),
                    samples: 2,
                    node: 0,
                };
                let outcome = run(&config).unwrap();
                assert_eq!(outcome.samples.len(), 2);
                for sample in &outcome.samples {
                    assert_eq!(sample.ops_per_thread, vec![2000; 2], "{lock:?} {load:?}");
                }
                let counted = load == Load::OneLoad || lock == LockKind::Atomic;
                assert_eq!(outcome.count_verified, counted.then_some(true), "{lock:?} {load:?}");
                assert!(outcome.placement.verified);
            }
        }
    }

    #[test]
    fn a_timed_run_checks_its_count_too() {
        let config = Config {
            lock: LockKind::Mcs,
            load: Load::OneLoad,
            cpus: affinity::allowed_cpus().unwrap(),
            threads: 2,
            budget: Budget::Time(std::time::Duration::from_millis(3)),
            samples: 1,
            node: 0,
        };
        let outcome = run(&config).unwrap();
        assert_eq!(outcome.count_verified, Some(true));
        assert!(outcome.samples[0].total_ops() > 0);
    }
}
