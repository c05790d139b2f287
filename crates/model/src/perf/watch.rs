//! Raw readings of `watch`: per thread, how often the watched address was
//! accessed and at which instruction addresses. `probe` produces them;
//! `analyze` turns them into rates and names the code.

use serde::Serialize;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Access {
    Write,
    /// Reads and writes (x86 has no read-only watchpoints).
    ReadWrite,
}

/// How many samples landed on one instruction address.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct IpHits {
    /// As the kernel reports it: on x86 a data breakpoint traps *after* the
    /// access, so this is the instruction following the writing one.
    pub ip: u64,
    pub samples: u64,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ThreadRaw {
    pub tid: u32,
    /// When it was attached, in seconds after the watch started.
    pub attached_at_s: f64,
    /// How long it was watched: until the end, or until it was seen gone.
    pub watched_s: f64,
    /// Every access the kernel counted (not sampled).
    pub hits: u64,
    pub exited: bool,
    /// False when no ring buffer could be mapped (the locked-memory limit,
    /// `kernel.perf_event_mlock_kb`): counted, but no instruction addresses.
    pub sampled: bool,
    /// Sorted by address.
    pub ip_hits: Vec<IpHits>,
    /// Samples the kernel dropped because the ring buffer was full.
    pub lost_samples: u64,
    /// PERF_RECORD_THROTTLE records: the kernel paused sampling this event.
    pub throttle_events: u64,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct WatchRaw {
    pub pid: u32,
    pub address: u64,
    pub len_bytes: u64,
    pub access: Access,
    /// From the first attach to the last read.
    pub duration_s: f64,
    pub rescan_interval_ms: u64,
    pub rescans: u64,
    pub threads: Vec<ThreadRaw>,
    /// Threads listed but gone before they could be attached.
    pub threads_missed: u64,
    /// The whole process exited before the watch ended.
    pub process_exited: bool,
    /// Threads that could not be attached after the start, and why.
    pub problems: Vec<String>,
}
