//! The remote-global bug, in miniature: the database incident's `nil_root`.
//!
//! Workers pinned to one node each do a fixed amount of work on their own
//! data per operation, and between its pieces write K times to a global
//! (the incident measured about 3 writes per query). Every write to a line
//! another core holds costs an invalidation, and all writers queue for the
//! one line, so throughput hits a ceiling of about
//! 1 / (K × time per invalidation) however many threads are added. Where
//! the line's memory lives changes that time: with the global on a remote
//! node the database ran at 40%. The fix is a per-thread copy.
//!
//! The writes are plain stores (relaxed atomics, a `mov` on x86), like the
//! pointer assignment that wrote `nil_root`, and each is preceded by a
//! read of the global that the following work depends on (see `one_op`).

use std::sync::atomic::{AtomicU64, Ordering};

use super::{repeat, run_pinned, Budget, RunSample};
use crate::buffer::{NodeBuffer, PageKind, Placement};
use crate::error::MeasureError;

pub use numasleuth_model::lab::Global;

/// Words of private data each operation reads and rewrites: enough work
/// (tens of ns) that one thread alone is not bound by the global, little
/// enough that contention shows with a handful of threads.
pub const LOCAL_WORDS_PER_OP: usize = 64;

/// Private data per worker: 2 KiB, so it stays in L1.
const LOCAL_WORDS: usize = 256;

/// Bytes between per-thread copies of the global (two lines, see
/// `false_sharing::PADDED_STRIDE_BYTES`).
const SLOT_STRIDE_BYTES: usize = 128;

const BATCH_OPS: u64 = 64;

#[derive(Debug, Clone, PartialEq)]
pub struct Config {
    pub global: Global,
    /// CPUs of the workers' node; worker `i` runs on `cpus[i % len]`.
    pub cpus: Vec<u32>,
    pub threads: usize,
    /// The workers' node: per-thread copies live here, and so does the
    /// shared global when `global` is `Local`.
    pub local_node: u32,
    /// Where the shared global lives when `global` is `Remote`.
    pub remote_node: Option<u32>,
    pub writes_per_op: u32,
    pub budget: Budget,
    pub samples: usize,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Outcome {
    pub samples: Vec<RunSample>,
    /// Where the global (or the per-thread copies) really are.
    pub placement: Placement,
}

/// The memory the workers write to: one word, or one padded word each.
struct Targets {
    buffer: NodeBuffer,
    stride_bytes: usize,
    count: usize,
}

impl Targets {
    fn word(&self, index: usize) -> &AtomicU64 {
        let slot = index.min(self.count - 1) * self.stride_bytes;
        // SAFETY: the buffer is page aligned and holds `count` slots of
        // `stride_bytes` (a multiple of 8); it is only accessed through
        // these atomics while `self` lives.
        unsafe { &*self.buffer.as_ptr().add(slot).cast::<AtomicU64>() }
    }

    fn drain(&self) -> Vec<u64> {
        (0..self.count)
            .map(|i| self.word(i).swap(0, Ordering::SeqCst))
            .collect()
    }
}

/// One placement, `samples` times after a discarded warm-up. After every
/// sample the global must hold what the writers left: each per-thread copy
/// its thread's last operation number, the shared global some thread's.
pub fn run(config: &Config) -> Result<Outcome, MeasureError> {
    if config.writes_per_op == 0 {
        return Err(MeasureError::Invalid(
            "the global needs at least one write per operation".into(),
        ));
    }
    let (node, count) = match config.global {
        Global::Local => (config.local_node, 1),
        Global::Remote => match config.remote_node {
            Some(node) => (node, 1),
            None => return Err(MeasureError::Invalid("the remote placement needs a remote node".into())),
        },
        Global::PerThread => (config.local_node, config.threads.max(1)),
    };
    let targets = Targets {
        buffer: NodeBuffer::allocate(count * SLOT_STRIDE_BYTES, node, PageKind::Small)?,
        stride_bytes: SLOT_STRIDE_BYTES,
        count,
    };
    let writes = config.writes_per_op;
    let samples = repeat(
        config.samples,
        || {
            run_pinned(&config.cpus, config.threads, config.budget, BATCH_OPS, |index| {
                // Allocated and first touched inside the pinned worker, so
                // the private data is on the worker's node.
                let mut local = vec![0u64; LOCAL_WORDS];
                let target = targets.word(index);
                let (mut op, mut cursor) = (0u64, 0usize);
                Ok(move |ops: u64| {
                    for _ in 0..ops {
                        op += 1;
                        one_op(&mut local, &mut cursor, target, op, writes);
                    }
                })
            })
        },
        |sample| check(&targets.drain(), config.global, sample),
    )?;
    Ok(Outcome {
        samples,
        placement: targets.buffer.placement().clone(),
    })
}

/// One operation: the private work cut into `writes` pieces. Each piece
/// first reads the global and mixes what it saw into the work, then the
/// piece ends with a store of the operation number to the global.
///
/// The read matters: a store alone retires into the store buffer and the
/// core runs on, hiding the line's trip; a load the work depends on
/// stalls until the line arrives. In the incident it was such loads
/// (of `nil_root` and of a word beside it) that took the time.
#[inline]
fn one_op(local: &mut [u64], cursor: &mut usize, global: &AtomicU64, op: u64, writes: u32) {
    let per_piece = (LOCAL_WORDS_PER_OP / writes as usize).max(1);
    for _ in 0..writes {
        let seen = global.load(Ordering::Relaxed);
        for _ in 0..per_piece {
            let i = *cursor % LOCAL_WORDS;
            *cursor = cursor.wrapping_add(1);
            local[i] = local[i].wrapping_mul(6_364_136_223_846_793_005).wrapping_add(op ^ seen);
        }
        // Keeps the private work in memory, as real work would be, instead
        // of letting the compiler fold it into registers.
        std::hint::black_box(&mut *local);
        global.store(op, Ordering::Relaxed);
    }
}

fn check(values: &[u64], global: Global, sample: &RunSample) -> Result<(), MeasureError> {
    let ok = match global {
        Global::PerThread => values == sample.ops_per_thread.as_slice(),
        Global::Local | Global::Remote => sample.ops_per_thread.contains(&values[0]),
    };
    if ok {
        Ok(())
    } else {
        Err(MeasureError::Invalid(format!(
            "the {} global holds {values:?}, which no worker wrote last (operations {:?})",
            global.name(),
            sample.ops_per_thread
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::affinity;

    fn config(global: Global, threads: usize, writes_per_op: u32) -> Config {
        Config {
            global,
            cpus: affinity::allowed_cpus().unwrap(),
            threads,
            local_node: 0,
            remote_node: None,
            writes_per_op,
            budget: Budget::OpsPerThread(3000),
            samples: 2,
        }
    }

    #[test]
    fn every_placement_runs_its_operations_and_leaves_the_last_write() {
        for global in [Global::Local, Global::PerThread] {
            for (threads, writes) in [(1, 1), (2, 3), (3, 5)] {
                let outcome = run(&config(global, threads, writes)).unwrap();
                for sample in &outcome.samples {
                    assert_eq!(sample.ops_per_thread, vec![3000; threads], "{global:?}");
                }
                assert!(outcome.placement.verified);
            }
        }
    }

    #[test]
    fn remote_without_a_node_or_writes_is_an_error() {
        assert!(run(&config(Global::Remote, 1, 3)).is_err());
        assert!(run(&config(Global::Local, 1, 0)).is_err());
        let mut remote = config(Global::Remote, 1, 3);
        remote.remote_node = Some(4000);
        assert!(run(&remote).unwrap_err().to_string().contains("node 4000"));
    }

    #[test]
    fn a_wrong_final_value_is_caught() {
        let sample = RunSample {
            span_ns: 1,
            ops_per_thread: vec![5, 7],
            cpu_ns_per_thread: vec![1, 1],
        };
        assert!(check(&[7], Global::Local, &sample).is_ok());
        assert!(check(&[6], Global::Local, &sample).is_err());
        assert!(check(&[5, 7], Global::PerThread, &sample).is_ok());
        assert!(check(&[7, 5], Global::PerThread, &sample).is_err());
    }
}
