//! Hardware watchpoints on every thread of a running process.
//!
//! One perf breakpoint event per thread (`pid = tid, cpu = -1`): the kernel
//! loads the address into a debug register whenever that thread runs, and
//! counts every matching access by user code. The process is never stopped;
//! each hit costs it one debug trap, nothing more.
//!
//! Each event also samples with period 1 (`PERF_SAMPLE_IP | TID`) into a
//! small ring buffer per thread, drained every few milliseconds into a
//! histogram of instruction addresses, so memory stays bounded by the number
//! of distinct writing instructions, not by the number of writes. The count
//! comes from the event itself, not from the samples: a full ring buffer
//! loses samples (reported) but never counts.
//!
//! Threads started during the watch are found by listing `/proc/PID/task`
//! every `rescan_interval` and attached then; a thread that lives and dies
//! between two listings is not seen, which is reported as a limit, and its
//! writes are missed. (`inherit` would follow threads created by watched
//! threads without a gap, but an inherited event cannot share our per-thread
//! ring buffers, so rescanning is used instead.) perf needs the live
//! system, so `/proc` here is always the real one.

use std::collections::{HashMap, HashSet};
use std::time::{Duration, Instant};

use perf_event::data::Record;
use perf_event::events::Breakpoint;
use perf_event::{Builder, Counter, SampleFlag, Sampler};

use numasleuth_model::stop::Stop;
use thiserror::Error;

use crate::error::{classify, ProbeError};
use crate::live_threads;
use crate::ring;
pub use numasleuth_model::perf::watch::{Access, IpHits, ThreadRaw, WatchRaw};

/// How often ring buffers are drained.
const POLL: Duration = Duration::from_millis(10);

#[derive(Debug, Clone)]
pub struct WatchSpec {
    pub pid: u32,
    pub address: u64,
    pub len_bytes: u64,
    pub access: Access,
    /// How long to watch; `None`: until stopped.
    pub duration: Option<Duration>,
    /// How often `/proc/PID/task` is listed for threads started meanwhile.
    pub rescan_interval: Duration,
    /// Data pages of each thread's sample ring buffer (a power of two).
    pub ring_pages: usize,
    /// `kernel.perf_event_paranoid`, only to explain a refusal.
    pub paranoid: Option<i32>,
}

enum Event {
    Sampled(Sampler),
    Counted(Counter),
}

/// A thread's count could not be read at the end; the watch keeps the
/// others and lists this one among its problems.
#[derive(Debug, Error)]
#[error("reading the count of thread {tid}: {error}")]
struct CountUnread {
    tid: u32,
    error: std::io::Error,
}

struct Attached {
    tid: u32,
    event: Event,
    attached_at: Duration,
    gone_at: Option<Duration>,
    ips: HashMap<u64, u64>,
    lost: u64,
    throttles: u64,
}

impl Attached {
    /// One bounded pass over the ring (`ring::drain_pass`); `stopped`:
    /// the event is disabled, so the ring is emptied.
    fn drain(&mut self, stopped: bool) {
        let Event::Sampled(sampler) = &mut self.event else {
            return;
        };
        let (ips, lost, throttles) = (&mut self.ips, &mut self.lost, &mut self.throttles);
        let each = |record: perf_event::Record<'_>| match record.parse_record() {
            Ok(Record::Sample(sample)) => {
                if let Some(ip) = sample.ip() {
                    *ips.entry(ip).or_insert(0) += 1;
                }
            }
            Ok(Record::Lost(l)) => *lost += l.lost,
            Ok(Record::LostSamples(l)) => *lost += l.lost,
            Ok(Record::Throttle(_)) => *throttles += 1,
            _ => {}
        };
        if stopped {
            ring::drain_stopped(sampler, each);
        } else {
            ring::drain_pass(sampler, each);
        }
    }

    fn finish(mut self, end: Duration) -> Result<ThreadRaw, CountUnread> {
        // Disabled first, so the last drain ends; the count stays readable.
        let stopped = match &mut self.event {
            Event::Sampled(sampler) => sampler.disable().is_ok(),
            Event::Counted(_) => true,
        };
        // Not disabled: one more bounded pass; what it leaves is counted
        // as lost below, against the exact count.
        self.drain(stopped);
        let (hits, sampled) = match &mut self.event {
            Event::Sampled(sampler) => (sampler.read(), true),
            Event::Counted(counter) => (counter.read(), false),
        };
        let hits = hits.map_err(|error| CountUnread { tid: self.tid, error })?;
        if sampled {
            // Every hit asks for a sample (period 1). When the ring was full
            // the kernel drops samples, and it writes its LOST record only
            // when a later sample finds room, which never happens if the
            // thread stops writing or exits first. The counter is exact, so
            // what it counted and the ring did not deliver was lost.
            let delivered: u64 = self.ips.values().sum();
            self.lost = self.lost.max(hits.saturating_sub(delivered));
        }
        let mut ip_hits: Vec<IpHits> = self
            .ips
            .into_iter()
            .map(|(ip, samples)| IpHits { ip, samples })
            .collect();
        ip_hits.sort_by_key(|h| h.ip);
        let until = self.gone_at.unwrap_or(end);
        Ok(ThreadRaw {
            tid: self.tid,
            attached_at_s: self.attached_at.as_secs_f64(),
            watched_s: until.saturating_sub(self.attached_at).as_secs_f64(),
            hits,
            exited: self.gone_at.is_some(),
            sampled,
            ip_hits,
            lost_samples: self.lost,
            throttle_events: self.throttles,
        })
    }
}

fn builder(spec: &WatchSpec, tid: u32) -> Builder<'static> {
    let event = match spec.access {
        Access::Write => Breakpoint::write(spec.address, spec.len_bytes),
        Access::ReadWrite => Breakpoint::read_write(spec.address, spec.len_bytes),
    };
    let mut builder = Builder::new(event);
    builder
        .observe_pid(tid as libc::pid_t)
        .any_cpu()
        .exclude_kernel(true)
        .exclude_hv(true);
    builder
}

/// Opens the event for one thread: sampled if a ring buffer can be mapped,
/// counted only otherwise. `Ok(None)`: the thread exited meanwhile.
fn attach(spec: &WatchSpec, tid: u32) -> Result<Option<Event>, ProbeError> {
    let mut sampling = builder(spec, tid);
    sampling.sample_period(1).sample(SampleFlag::IP | SampleFlag::TID);
    let opened = match sampling.build() {
        Ok(counter) => counter,
        Err(e) if e.raw_os_error() == Some(libc::ESRCH) => return Ok(None),
        Err(e) => return Err(classify(&e, spec.pid, tid, spec.address, spec.len_bytes, spec.paranoid)),
    };
    // The ring is whole pages of this machine (64 KiB on many Arm kernels).
    let mut event = match opened.sampled(crate::tracepoint::ring_bytes(spec.ring_pages)) {
        Ok(sampler) => Event::Sampled(sampler),
        // No ring buffer (locked-memory limit): count without sampling.
        Err(_) => match builder(spec, tid).build() {
            Ok(counter) => Event::Counted(counter),
            Err(e) if e.raw_os_error() == Some(libc::ESRCH) => return Ok(None),
            Err(e) => return Err(classify(&e, spec.pid, tid, spec.address, spec.len_bytes, spec.paranoid)),
        },
    };
    let enabled = match &mut event {
        Event::Sampled(sampler) => sampler.enable(),
        Event::Counted(counter) => counter.enable(),
    };
    match enabled {
        Ok(()) => Ok(Some(event)),
        Err(e) if e.raw_os_error() == Some(libc::ESRCH) => Ok(None),
        Err(e) => Err(classify(&e, spec.pid, tid, spec.address, spec.len_bytes, spec.paranoid)),
    }
}

/// The threads being watched, and what happened to the others.
struct Watched {
    start: Instant,
    threads: Vec<Attached>,
    seen: HashSet<u32>,
    missed: u64,
    problems: Vec<String>,
}

impl Watched {
    /// One rescan: threads that left are marked gone and new ones attached.
    /// False when the process itself has gone.
    fn rescan(&mut self, spec: &WatchSpec) -> bool {
        let Some(tids) = live_threads::thread_ids(spec.pid) else {
            let gone = self.start.elapsed();
            self.threads.iter_mut().for_each(|t| {
                t.gone_at.get_or_insert(gone);
            });
            return false;
        };
        let alive: HashSet<u32> = tids.iter().copied().collect();
        for thread in self.threads.iter_mut().filter(|t| t.gone_at.is_none()) {
            if !alive.contains(&thread.tid) {
                thread.gone_at = Some(self.start.elapsed());
            }
        }
        for tid in tids.into_iter().filter(|t| self.seen.insert(*t)) {
            match attach(spec, tid) {
                Ok(Some(event)) => self.threads.push(new_attached(tid, event, self.start.elapsed())),
                Ok(None) => self.missed += 1,
                // Later threads may fail alone (e.g. debug registers
                // taken on them); the watch goes on and says so.
                Err(e) => self
                    .problems
                    .push(format!("thread {tid} started during the watch: {e}")),
            }
        }
        true
    }

    /// Each thread's counts and samples, in thread order.
    fn finish(mut self, spec: &WatchSpec, rescans: u64, process_exited: bool) -> WatchRaw {
        let end = self.start.elapsed();
        let mut raw_threads = Vec::with_capacity(self.threads.len());
        for thread in self.threads {
            match thread.finish(end) {
                Ok(raw) => raw_threads.push(raw),
                Err(problem) => self.problems.push(problem.to_string()),
            }
        }
        raw_threads.sort_by_key(|t| t.tid);
        WatchRaw {
            pid: spec.pid,
            address: spec.address,
            len_bytes: spec.len_bytes,
            access: spec.access,
            duration_s: end.as_secs_f64(),
            rescan_interval_ms: spec.rescan_interval.as_millis() as u64,
            rescans,
            threads: raw_threads,
            threads_missed: self.missed,
            process_exited,
            problems: self.problems,
        }
    }
}

/// Watches `spec.address` in every thread of `spec.pid` for
/// `spec.duration` (or until `stop` is requested, or the process exits),
/// following threads that start meanwhile; what was counted until then is
/// returned either way.
pub fn watch(spec: &WatchSpec, stop: &Stop) -> Result<WatchRaw, ProbeError> {
    let pid = spec.pid;
    let first = live_threads::thread_ids(pid).ok_or(ProbeError::NoSuchProcess { pid })?;
    let mut watched = Watched {
        start: Instant::now(),
        threads: Vec::new(),
        seen: HashSet::new(),
        missed: 0,
        problems: Vec::new(),
    };
    let start = watched.start;
    // At the start any failure is the answer: nothing is watched yet, and
    // the events opened so far are closed when `watched` is dropped.
    for tid in first {
        watched.seen.insert(tid);
        match attach(spec, tid)? {
            Some(event) => watched.threads.push(new_attached(tid, event, start.elapsed())),
            None => watched.missed += 1,
        }
    }
    if watched.threads.is_empty() {
        return Err(ProbeError::NoSuchProcess { pid });
    }
    let too_long = || ProbeError::DurationOutOfRange {
        seconds: spec
            .duration
            .unwrap_or_default()
            .as_secs()
            .max(spec.rescan_interval.as_secs()),
    };
    let deadline = match spec.duration {
        Some(duration) => Some(start.checked_add(duration).ok_or_else(too_long)?),
        None => None,
    };
    let mut next_rescan = start.checked_add(spec.rescan_interval).ok_or_else(too_long)?;
    let (mut rescans, mut process_exited) = (0u64, false);
    loop {
        let now = Instant::now();
        if deadline.is_some_and(|d| now >= d) || stop.requested() {
            break;
        }
        watched.threads.iter_mut().for_each(|t| t.drain(false));
        if now >= next_rescan {
            next_rescan = now.checked_add(spec.rescan_interval).ok_or_else(too_long)?;
            rescans += 1;
            if !watched.rescan(spec) {
                process_exited = true;
                break;
            }
        }
        let left = deadline.map_or(POLL, |d| d.saturating_duration_since(Instant::now()));
        std::thread::sleep(POLL.min(left));
    }
    Ok(watched.finish(spec, rescans, process_exited))
}

fn new_attached(tid: u32, event: Event, attached_at: Duration) -> Attached {
    Attached {
        tid,
        event,
        attached_at,
        gone_at: None,
        ips: HashMap::new(),
        lost: 0,
        throttles: 0,
    }
}

#[cfg(test)]
#[path = "watch_tests.rs"]
mod tests;
