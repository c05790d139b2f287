//! Arm SPE (Statistical Profiling Extension) sampling of every thread of a
//! process: the `arm_spe` PMU writes its sample records into perf's AUX
//! area, not into sample records, so each thread's event gets a ring and
//! an AUX area mapped by hand ([`mapped`]), and the bytes of each
//! `PERF_RECORD_AUX` are handed to the caller as they are drained. Raw
//! bytes, not records: decoding them is `decode::spe`'s, as decoding
//! instructions is for the timer samples.
//!
//! One event per thread, on any CPU, as `hotlines`' other samplers do:
//! perf's pid argument is a thread, and a per-CPU event would sample every
//! process (it needs more rights, and the Context packet, which would name
//! the thread, is written only when the kernel puts the PID there). So
//! every chunk belongs to the thread its event is on; the CPU is the
//! record's own (`sample_id_all`). Bounded: at most [`MAX_THREADS`]
//! threads get an area, and the bytes copied are capped per second and in
//! all; what a cap leaves is counted in the totals.
//!
//! Not run on real SPE hardware yet (docs/hotlines.md): the ring
//! arithmetic ([`aux_ring`]) is tested here, the mappings only where a
//! kernel has an AUX PMU.

pub mod aux_ring;
mod mapped;

use std::collections::HashSet;
use std::time::{Duration, Instant};

use perf_event::{Builder, SampleFlag};

use numasleuth_model::perf::pmu::EventSpec;
use numasleuth_model::perf::sample::{AuxTotals, SampleRaw, ThreadSamples};
use numasleuth_model::stop::Stop;

use crate::error::{classify, ProbeError};
use crate::live_threads;
use crate::pmu::open::SpecEvent;
use mapped::{AuxEvent, PassCounts};

/// Whether this build samples through `arm_spe`: the PMU exists on arm64
/// kernels only; elsewhere `hotlines` says so and does not offer it.
pub const READS_SPE: bool = cfg!(target_arch = "aarch64");

/// Threads given a ring and an AUX area (each is locked memory).
pub const MAX_THREADS: usize = 256;
/// AUX bytes copied out per second, over all threads, and in all: what a
/// busy 80-core machine's SPE writes can outrun what one thread decodes.
pub const MAX_AUX_BYTES_PER_SECOND: u64 = 64 << 20;
pub const MAX_AUX_BYTES_TOTAL: u64 = 2 << 30;
/// AUX area per thread: room for a 10 ms poll of a busy thread at the
/// period `analyze::pmu::precise` asks for, and the two pages the SPE
/// driver needs at least, whatever the page size.
const AUX_BYTES_MIN: usize = 128 << 10;
/// Ring data bytes per thread: it holds only AUX notices (48 bytes each).
const RING_DATA_BYTES_MIN: usize = 8 << 10;
const POLL: Duration = Duration::from_millis(10);
/// Drain passes after disabling, for the kernel's last AUX notices.
const FINAL_PASSES: usize = 64;
const MAX_PROBLEMS: usize = 64;

/// What to sample with and for how long.
#[derive(Debug, Clone)]
pub struct SpeSpec {
    pub pid: u32,
    pub duration: Duration,
    /// The `arm_spe_N` PMU's type and config words (`analyze::pmu::precise`).
    pub event: EventSpec,
    /// Operations between two samples; the driver raises it to the PMU's
    /// minimum interval.
    pub period: u64,
    pub rescan_interval: Duration,
    pub paranoid: Option<i32>,
}

/// One stretch of SPE records, lent to the caller.
#[derive(Debug)]
pub struct AuxChunk<'a> {
    /// The thread whose event wrote it.
    pub tid: u32,
    /// The CPU it was written on, from the AUX record.
    pub cpu: Option<u32>,
    pub bytes: &'a [u8],
}

struct Thread {
    tid: u32,
    event: AuxEvent,
    chunks: u64,
    lost: u64,
}

/// Pages of `page_bytes` holding `min_bytes` at least, and `min_pages`:
/// a power of two of them, as perf wants for both buffers.
fn power_of_two_pages(min_bytes: usize, page_bytes: usize, min_pages: usize) -> usize {
    let page_bytes = page_bytes.max(1);
    min_bytes.div_ceil(page_bytes).max(min_pages).next_power_of_two()
}

fn attach(spec: &SpeSpec, tid: u32) -> Result<Option<AuxEvent>, ProbeError> {
    let mut builder = Builder::new(SpecEvent(&spec.event));
    builder
        .observe_pid(tid as libc::pid_t)
        .any_cpu()
        .exclude_kernel(true)
        .exclude_hv(true)
        .sample_period(spec.period.max(1))
        .sample(SampleFlag::TID | SampleFlag::CPU)
        .sample_id_all(true)
        // The driver starts the event only once its AUX area exists.
        .enabled(false);
    let fail = |e: &std::io::Error| classify(e, spec.pid, tid, 0, 0, spec.paranoid);
    let counter = match builder.build() {
        Ok(c) => c,
        Err(e) if e.raw_os_error() == Some(libc::ESRCH) => return Ok(None),
        Err(e) => return Err(fail(&e)),
    };
    let page_bytes = numasleuth_kernel::pages::page_size_bytes() as usize;
    let data_pages = power_of_two_pages(RING_DATA_BYTES_MIN, page_bytes, 1);
    // The SPE driver refuses an AUX area of fewer than two pages.
    let aux_bytes = power_of_two_pages(AUX_BYTES_MIN, page_bytes, 2) * page_bytes;
    let mut event = AuxEvent::map(counter, data_pages, aux_bytes).map_err(|e| ProbeError::Other {
        pid: spec.pid,
        tid,
        message: format!(
            "cannot map an SPE ring and AUX buffer ({e}): the locked-memory limit (`ulimit -l`, \
             kernel.perf_event_mlock_kb) is too low"
        ),
    })?;
    match event.counter.enable() {
        Ok(()) => Ok(Some(event)),
        Err(e) if e.raw_os_error() == Some(libc::ESRCH) => Ok(None),
        Err(e) => Err(fail(&e)),
    }
}

/// The run's threads, caps and totals.
struct Run<'a> {
    spec: &'a SpeSpec,
    start: Instant,
    budget: aux_ring::ByteBudget,
    threads: Vec<Thread>,
    seen: HashSet<u32>,
    ended: Vec<ThreadSamples>,
    totals: AuxTotals,
    problems: Vec<String>,
    unlisted_problems: u64,
    past_thread_cap: u64,
}

impl Run<'_> {
    /// One bounded pass over one thread's ring; how many ring records it
    /// took.
    fn drain(&mut self, index: usize, on_chunk: &mut dyn FnMut(&AuxChunk<'_>)) -> usize {
        let now_ns = u64::try_from(self.start.elapsed().as_nanos()).unwrap_or(u64::MAX);
        let Some(thread) = self.threads.get_mut(index) else {
            return 0;
        };
        let tid = thread.tid;
        let pass = thread.event.drain(&mut self.budget, now_ns, &mut |chunk| {
            on_chunk(&AuxChunk {
                tid,
                cpu: chunk.record.cpu,
                bytes: chunk.bytes,
            })
        });
        thread.chunks = thread.chunks.saturating_add(pass.aux_records);
        thread.lost = thread.lost.saturating_add(pass.lost_ring_records);
        add(&mut self.totals, &pass);
        pass.ring_records
    }

    /// Disables a thread's event and drains its last notices.
    fn finish_thread(&mut self, index: usize, on_chunk: &mut dyn FnMut(&AuxChunk<'_>)) {
        let disabled = self
            .threads
            .get_mut(index)
            .is_some_and(|t| t.event.counter.disable().is_ok());
        let passes = if disabled { FINAL_PASSES } else { 1 };
        for _ in 0..passes {
            if self.drain(index, on_chunk) == 0 {
                break;
            }
        }
    }

    fn note(&mut self, problem: String) {
        if self.problems.len() < MAX_PROBLEMS {
            self.problems.push(problem);
        } else {
            self.unlisted_problems += 1;
        }
    }

    /// Attaches a thread not seen before; an error only for the first
    /// threads (later ones are noted, as threads come and go).
    fn attach_new(&mut self, tid: u32, first: bool) -> Result<(), ProbeError> {
        if !self.seen.insert(tid) {
            return Ok(());
        }
        if self.threads.len() >= MAX_THREADS {
            self.past_thread_cap += 1;
            return Ok(());
        }
        match attach(self.spec, tid) {
            Ok(Some(event)) => self.threads.push(Thread {
                tid,
                event,
                chunks: 0,
                lost: 0,
            }),
            Ok(None) => {}
            Err(e) if first => return Err(e),
            Err(e) => self.note(format!("thread {tid} started during sampling: {e}")),
        }
        Ok(())
    }

    /// Ended threads drained and closed, new ones attached; false when the
    /// process itself has gone.
    fn rescan(&mut self, on_chunk: &mut dyn FnMut(&AuxChunk<'_>)) -> bool {
        let pid = self.spec.pid;
        let Some(tids) = live_threads::thread_ids(pid).filter(|_| !live_threads::has_ended(pid)) else {
            return false;
        };
        let alive: HashSet<u32> = tids.iter().copied().collect();
        let mut index = 0;
        while index < self.threads.len() {
            if alive.contains(&self.threads[index].tid) {
                index += 1;
                continue;
            }
            self.finish_thread(index, on_chunk);
            let thread = self.threads.remove(index);
            self.ended.push(summary(&thread, true));
        }
        for tid in tids {
            // Errors are noted inside for threads after the first listing.
            let _ = self.attach_new(tid, false);
        }
        true
    }
}

fn add(totals: &mut AuxTotals, pass: &PassCounts) {
    totals.chunks = totals.chunks.saturating_add(pass.aux_records);
    totals.copied_bytes = totals.copied_bytes.saturating_add(pass.copied_bytes);
    totals.over_cap_bytes = totals.over_cap_bytes.saturating_add(pass.over_cap_bytes);
    totals.missed_bytes = totals.missed_bytes.saturating_add(pass.missed_bytes);
    totals.truncated_chunks = totals.truncated_chunks.saturating_add(pass.truncated);
    totals.partial_chunks = totals.partial_chunks.saturating_add(pass.partial);
    totals.collision_chunks = totals.collision_chunks.saturating_add(pass.collision);
    totals.lost_ring_records = totals.lost_ring_records.saturating_add(pass.lost_ring_records);
    totals.unreadable_ring_bytes = totals.unreadable_ring_bytes.saturating_add(pass.unreadable_ring_bytes);
}

fn summary(thread: &Thread, exited: bool) -> ThreadSamples {
    ThreadSamples {
        tid: thread.tid,
        samples: thread.chunks,
        lost_samples: thread.lost,
        exited,
    }
}

/// Samples every thread of `spec.pid` through `arm_spe` for
/// `spec.duration`, or until `stop`, handing each AUX chunk to `on_chunk`
/// as it is drained; what was sampled until then is returned either way.
pub fn sample(spec: &SpeSpec, on_chunk: &mut dyn FnMut(&AuxChunk<'_>), stop: &Stop) -> Result<SampleRaw, ProbeError> {
    let pid = spec.pid;
    let first = live_threads::thread_ids(pid).ok_or(ProbeError::NoSuchProcess { pid })?;
    let mut run = Run {
        spec,
        start: Instant::now(),
        budget: aux_ring::ByteBudget::new(MAX_AUX_BYTES_PER_SECOND, MAX_AUX_BYTES_TOTAL),
        threads: Vec::new(),
        seen: HashSet::new(),
        ended: Vec::new(),
        totals: AuxTotals::default(),
        problems: Vec::new(),
        unlisted_problems: 0,
        past_thread_cap: 0,
    };
    for tid in first {
        run.attach_new(tid, true)?;
    }
    if run.threads.is_empty() {
        return Err(ProbeError::NoSuchProcess { pid });
    }
    let too_long = || ProbeError::DurationOutOfRange {
        seconds: spec.duration.as_secs(),
    };
    let deadline = run.start.checked_add(spec.duration).ok_or_else(too_long)?;
    let mut next_rescan = run.start.checked_add(spec.rescan_interval).ok_or_else(too_long)?;
    let mut process_exited = false;
    while Instant::now() < deadline && !stop.requested() {
        for index in 0..run.threads.len() {
            run.drain(index, on_chunk);
        }
        if Instant::now() >= next_rescan {
            next_rescan = Instant::now().checked_add(spec.rescan_interval).ok_or_else(too_long)?;
            if !run.rescan(on_chunk) {
                process_exited = true;
                break;
            }
        }
        stop.sleep(POLL.min(deadline.saturating_duration_since(Instant::now())));
    }
    for index in 0..run.threads.len() {
        run.finish_thread(index, on_chunk);
    }
    Ok(finish(run, process_exited))
}

fn finish(mut run: Run<'_>, process_exited: bool) -> SampleRaw {
    let mut threads: Vec<ThreadSamples> = run.threads.iter().map(|t| summary(t, process_exited)).collect();
    threads.append(&mut run.ended);
    threads.sort_by_key(|t| t.tid);
    if run.unlisted_problems > 0 {
        run.problems.push(format!(
            "… and {} more thread(s) that could not be attached",
            run.unlisted_problems
        ));
    }
    if run.past_thread_cap > 0 {
        run.problems.push(format!(
            "{} thread(s) past the first {MAX_THREADS} were not sampled (each sampled thread holds an SPE \
             buffer of locked memory)",
            run.past_thread_cap
        ));
    }
    SampleRaw {
        pid: run.spec.pid,
        duration_s: run.start.elapsed().as_secs_f64(),
        threads,
        process_exited,
        problems: run.problems,
        aux: Some(run.totals),
    }
}

#[cfg(test)]
mod tests {
    use super::power_of_two_pages;

    #[test]
    fn buffers_are_a_power_of_two_of_whole_pages() {
        assert_eq!(power_of_two_pages(128 << 10, 4096, 2), 32);
        assert_eq!(power_of_two_pages(128 << 10, 64 << 10, 2), 2);
        assert_eq!(power_of_two_pages(100 << 10, 4096, 2), 32);
        assert_eq!(power_of_two_pages(8 << 10, 4096, 1), 2);
        assert_eq!(power_of_two_pages(8 << 10, 64 << 10, 1), 1);
        assert_eq!(power_of_two_pages(8 << 10, 64 << 10, 2), 2);
        assert_eq!(power_of_two_pages(0, 0, 1), 1);
    }
}
