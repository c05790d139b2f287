//! Timer samples of every thread of a running process, with the user
//! registers and the code bytes at the sampled instruction: the input of
//! `hotlines`' instruction decoding.
//!
//! One software `cpu-clock` event per thread (it works in VMs with no
//! PMU), sampling `IP | TID | CPU | REGS_USER` into a ring buffer drained
//! every few milliseconds. Each sample is handed to the caller at once,
//! with the instruction bytes read from `/proc/PID/mem` while the process
//! still lives (cached per address), so nothing grows with the run's
//! length but the caller's own aggregate. Threads started meanwhile are
//! attached on the next listing of `/proc/PID/task`, as in `watch`.

use std::collections::{HashMap, HashSet};
use std::fs::File;
use std::os::unix::fs::FileExt;
use std::time::{Duration, Instant};

use perf_event::data::{MemOp, Record};
use perf_event::events::Software;
use perf_event::{Builder, SampleFlag, SampleSkid, Sampler};

use numasleuth_model::stop::Stop;

use crate::error::{classify, ProbeError};
use crate::live_threads;
use crate::pmu::open::SpecEvent;
use crate::pmu::EventSpec;
use crate::ring;
pub use numasleuth_model::perf::sample::{SampleRaw, ThreadSamples};

const POLL: Duration = Duration::from_millis(10);
const CODE_BYTES: usize = 15;
/// Code read before the IP, from the start of its function, so the
/// instruction just completed can be found (at most this far back).
pub const MAX_BACK_BYTES: u64 = 4096;
/// Distinct instruction addresses whose bytes are kept, and the bytes they
/// may hold in all (a JIT's code footprint must not become our memory).
const MAX_CODE_CACHE: usize = 200_000;
const MAX_CODE_CACHE_BYTES: usize = 64 << 20;
/// Problems listed one by one (threads that could not be attached); the
/// rest are counted.
const MAX_PROBLEMS: usize = 64;

/// What a thread is sampled on.
#[derive(Debug, Clone)]
pub enum SampleEvent {
    /// The software timer, every `period_ns` of the thread's CPU time:
    /// works everywhere, the address is found by decoding (`hotlines`).
    CpuClock { period_ns: u64 },
    /// A precise memory event (PEBS `mem-loads`/`mem-stores`, AMD
    /// `ibs_op`), every `period` events: the hardware gives each sample's
    /// data address.
    Precise { event: EventSpec, period: u64 },
}

#[derive(Debug, Clone)]
pub struct SampleSpec {
    pub pid: u32,
    pub duration: Duration,
    pub event: SampleEvent,
    /// perf's `sample_regs_user` mask.
    pub regs_mask: u64,
    pub rescan_interval: Duration,
    /// Data pages of each thread's ring buffer (a power of two).
    pub ring_pages: usize,
    pub paranoid: Option<i32>,
}

/// One timer sample, lent to the caller.
#[derive(Debug)]
pub struct RegSample<'a> {
    pub tid: u32,
    pub cpu: Option<u32>,
    pub ip: u64,
    /// In the order of the set bits of `regs_mask`; empty when the thread
    /// was in the kernel with no user registers to give.
    pub regs: &'a [u64],
    pub regs_mask: u64,
    /// The code from `ip - code_back` (the start of the function holding
    /// `ip`, when known and near) to up to 15 bytes past `ip`; `None` when
    /// it could not be read.
    pub code: Option<&'a [u8]>,
    pub code_back: usize,
    /// The data address, from a precise event (`PERF_SAMPLE_ADDR`).
    pub addr: Option<u64>,
    /// From a precise event's data source: `Some(true)` a store,
    /// `Some(false)` a load, `None` not said.
    pub is_store: Option<bool>,
}

struct Attached {
    tid: u32,
    sampler: Sampler,
    samples: u64,
    lost: u64,
}

/// Reads the code at sampled addresses while the process lives.
struct CodeReader {
    mem: Option<File>,
    cache: HashMap<u64, Option<(usize, Vec<u8>)>>,
    cache_bytes: usize,
}

impl CodeReader {
    fn bytes(&mut self, ip: u64, start: &dyn Fn(u64) -> Option<u64>) -> Option<(usize, &[u8])> {
        if !self.cache.contains_key(&ip) {
            let back = start(ip)
                .and_then(|s| ip.checked_sub(s))
                .filter(|b| *b <= MAX_BACK_BYTES)
                .unwrap_or(0);
            let read = self.read(ip - back, back as usize).map(|b| (back as usize, b));
            let bytes = read.as_ref().map_or(0, |(_, b)| b.len());
            if self.cache.len() >= MAX_CODE_CACHE || self.cache_bytes.saturating_add(bytes) > MAX_CODE_CACHE_BYTES {
                // Past either cap, start over: memory stays bounded, and
                // addresses still hot are read again once.
                self.cache.clear();
                self.cache_bytes = 0;
            }
            self.cache_bytes += bytes;
            self.cache.insert(ip, read);
        }
        self.cache.get(&ip)?.as_ref().map(|(back, b)| (*back, b.as_slice()))
    }

    /// `back` bytes before the IP at `from + back`, and up to 15 after it.
    fn read(&self, from: u64, back: usize) -> Option<Vec<u8>> {
        let mem = self.mem.as_ref()?;
        let ip = from.checked_add(back as u64)?;
        let mut buffer = vec![0u8; back + CODE_BYTES];
        // An instruction near the end of a mapping: read up to the page end.
        let page_bytes = numasleuth_kernel::pages::page_size_bytes();
        let to_page_end = (page_bytes - (ip % page_bytes)) as usize;
        for want in [back + CODE_BYTES, back + to_page_end.min(CODE_BYTES)] {
            if let Ok(n) = mem.read_at(&mut buffer[..want], from) {
                if n > back {
                    buffer.truncate(n);
                    return Some(buffer);
                }
            }
        }
        None
    }
}

fn builder(spec: &SampleSpec) -> Builder<'_> {
    let mut builder = match &spec.event {
        SampleEvent::CpuClock { period_ns } => {
            let mut b = Builder::new(Software::CPU_CLOCK);
            b.sample_period((*period_ns).max(10_000))
                .sample_regs_user(spec.regs_mask)
                .sample(SampleFlag::IP | SampleFlag::TID | SampleFlag::CPU | SampleFlag::REGS_USER);
            b
        }
        SampleEvent::Precise { event, period } => {
            let mut b = Builder::new(SpecEvent(event));
            b.sample_period((*period).max(1))
                .precise_ip(SampleSkid::RequestZero)
                .sample(SampleFlag::IP | SampleFlag::TID | SampleFlag::CPU | SampleFlag::ADDR | SampleFlag::DATA_SRC);
            b
        }
    };
    builder.any_cpu().exclude_kernel(true).exclude_hv(true);
    builder
}

fn attach(spec: &SampleSpec, tid: u32) -> Result<Option<Sampler>, ProbeError> {
    let mut builder = builder(spec);
    builder.observe_pid(tid as libc::pid_t);
    let fail = |e: &std::io::Error| classify(e, spec.pid, tid, 0, 0, spec.paranoid);
    let counter = match builder.build() {
        Ok(c) => c,
        Err(e) if e.raw_os_error() == Some(libc::ESRCH) => return Ok(None),
        Err(e) => return Err(fail(&e)),
    };
    let mut sampler = counter
        .sampled(crate::tracepoint::ring_bytes(spec.ring_pages))
        .map_err(|e| ProbeError::Other {
            pid: spec.pid,
            tid,
            message: format!(
                "cannot map a sample ring buffer ({e}): the locked-memory limit (`ulimit -l`, \
                 kernel.perf_event_mlock_kb) is too low"
            ),
        })?;
    match sampler.enable() {
        Ok(()) => Ok(Some(sampler)),
        Err(e) if e.raw_os_error() == Some(libc::ESRCH) => Ok(None),
        Err(e) => Err(fail(&e)),
    }
}

impl Attached {
    /// One bounded pass over the ring (`ring::drain_pass`); `stopped`:
    /// the thread ended or its event is disabled, so the ring is emptied.
    fn drain(&mut self, stopped: bool, code: &mut CodeReader, hooks: &mut Hooks<'_>, regs_mask: u64) {
        let tid = self.tid;
        let (samples, lost) = (&mut self.samples, &mut self.lost);
        let each = |record: perf_event::Record<'_>| match record.parse_record() {
            Ok(Record::Sample(sample)) => {
                let Some(ip) = sample.ip() else { return };
                *samples += 1;
                let regs: &[u64] = sample.regs_user().map_or(&[], |r| &r.regs);
                let addr = sample.addr();
                let is_store = sample.data_src().and_then(|d| {
                    let op = d.mem_op();
                    if op.contains(MemOp::STORE) {
                        Some(true)
                    } else if op.contains(MemOp::LOAD) {
                        Some(false)
                    } else {
                        None
                    }
                });
                // A precise sample carries its address: no code to read.
                let bytes = if addr.is_some() {
                    None
                } else {
                    code.bytes(ip, hooks.function_start)
                };
                (hooks.on_sample)(&RegSample {
                    tid: sample.tid().unwrap_or(tid),
                    cpu: sample.cpu(),
                    ip,
                    regs,
                    regs_mask,
                    code: bytes.map(|(_, b)| b),
                    code_back: bytes.map_or(0, |(back, _)| back),
                    addr,
                    is_store,
                });
            }
            Ok(Record::Lost(l)) => *lost = lost.saturating_add(l.lost),
            Ok(Record::LostSamples(l)) => *lost = lost.saturating_add(l.lost),
            _ => {}
        };
        if stopped {
            ring::drain_stopped(&mut self.sampler, each);
        } else {
            ring::drain_pass(&mut self.sampler, each);
        }
    }
}

/// What the caller supplies: where the function holding an address starts
/// (to read the code before the IP), and what to do with each sample.
pub struct Hooks<'a> {
    pub function_start: &'a dyn Fn(u64) -> Option<u64>,
    pub on_sample: &'a mut dyn FnMut(&RegSample<'_>),
}

/// The threads being sampled, and those that ended or could not be attached.
struct Sampled {
    threads: Vec<Attached>,
    seen: HashSet<u32>,
    problems: Vec<String>,
    problems_unlisted: u64,
    /// Threads that ended: their counts, once their ring was drained and
    /// closed, so a process that starts and ends threads all the time does
    /// not pile up rings and descriptors.
    ended: Vec<ThreadSamples>,
}

impl Sampled {
    /// One rescan: ended threads are drained and closed, new ones attached.
    /// False when the process itself has gone.
    fn rescan(&mut self, spec: &SampleSpec, code: &mut CodeReader, hooks: &mut Hooks<'_>) -> bool {
        let Some(tids) = live_threads::thread_ids(spec.pid).filter(|_| !live_threads::has_ended(spec.pid)) else {
            return false;
        };
        let alive: HashSet<u32> = tids.iter().copied().collect();
        let ended = &mut self.ended;
        self.threads.retain_mut(|thread| {
            if alive.contains(&thread.tid) {
                return true;
            }
            thread.drain(true, code, hooks, spec.regs_mask);
            ended.push(summary(thread, true));
            false
        });
        for tid in tids.into_iter().filter(|t| self.seen.insert(*t)) {
            match attach(spec, tid) {
                Ok(Some(sampler)) => self.threads.push(new_attached(tid, sampler)),
                Ok(None) => {}
                Err(_) if self.problems.len() >= MAX_PROBLEMS => self.problems_unlisted += 1,
                Err(e) => self.problems.push(format!("thread {tid} started during sampling: {e}")),
            }
        }
        true
    }

    /// Every thread's counts, in thread order, and the problems met.
    fn finish(mut self, process_exited: bool) -> (Vec<ThreadSamples>, Vec<String>) {
        let mut out: Vec<ThreadSamples> = self.threads.iter().map(|t| summary(t, process_exited)).collect();
        out.append(&mut self.ended);
        out.sort_by_key(|t| t.tid);
        if self.problems_unlisted > 0 {
            self.problems.push(format!(
                "… and {} more thread(s) that could not be attached",
                self.problems_unlisted
            ));
        }
        (out, self.problems)
    }
}

/// Samples every thread of `spec.pid` for `spec.duration`, or until `stop`
/// is requested, calling `hooks.on_sample` for each sample as it is
/// drained; what was sampled until then is returned either way.
pub fn sample(spec: &SampleSpec, hooks: &mut Hooks<'_>, stop: &Stop) -> Result<SampleRaw, ProbeError> {
    let pid = spec.pid;
    let first = live_threads::thread_ids(pid).ok_or(ProbeError::NoSuchProcess { pid })?;
    let mut code = CodeReader {
        mem: File::open(format!("/proc/{pid}/mem")).ok(),
        cache: HashMap::new(),
        cache_bytes: 0,
    };
    let start = Instant::now();
    let mut sampled = Sampled {
        threads: Vec::new(),
        seen: HashSet::new(),
        problems: Vec::new(),
        problems_unlisted: 0,
        ended: Vec::new(),
    };
    for tid in first {
        sampled.seen.insert(tid);
        if let Some(sampler) = attach(spec, tid)? {
            sampled.threads.push(new_attached(tid, sampler));
        }
    }
    if sampled.threads.is_empty() {
        return Err(ProbeError::NoSuchProcess { pid });
    }
    let too_long = || ProbeError::DurationOutOfRange {
        seconds: spec.duration.as_secs(),
    };
    let deadline = start.checked_add(spec.duration).ok_or_else(too_long)?;
    let mut next_rescan = start.checked_add(spec.rescan_interval).ok_or_else(too_long)?;
    let mut process_exited = false;
    while Instant::now() < deadline && !stop.requested() {
        for thread in sampled.threads.iter_mut() {
            thread.drain(false, &mut code, hooks, spec.regs_mask);
        }
        if Instant::now() >= next_rescan {
            next_rescan = Instant::now().checked_add(spec.rescan_interval).ok_or_else(too_long)?;
            if !sampled.rescan(spec, &mut code, hooks) {
                process_exited = true;
                break;
            }
        }
        std::thread::sleep(POLL.min(deadline.saturating_duration_since(Instant::now())));
    }
    // Disabled first, so the last drain ends; a ring whose event could not
    // be disabled gets one more bounded pass.
    for thread in sampled.threads.iter_mut() {
        let stopped = thread.sampler.disable().is_ok();
        thread.drain(stopped, &mut code, hooks, spec.regs_mask);
    }
    let duration_s = start.elapsed().as_secs_f64();
    let (threads, problems) = sampled.finish(process_exited);
    Ok(SampleRaw {
        pid,
        duration_s,
        threads,
        process_exited,
        problems,
        aux: None,
    })
}

fn summary(t: &Attached, exited: bool) -> ThreadSamples {
    ThreadSamples {
        tid: t.tid,
        samples: t.samples,
        lost_samples: t.lost,
        exited,
    }
}

fn new_attached(tid: u32, sampler: Sampler) -> Attached {
    Attached {
        tid,
        sampler,
        samples: 0,
        lost: 0,
    }
}

#[cfg(test)]
#[path = "sample_tests.rs"]
mod tests;
