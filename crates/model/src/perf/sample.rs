//! Raw totals of a `hotlines` sampling run: samples and losses per thread.
//! `probe` produces them; `report` prints them.

use serde::Serialize;

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ThreadSamples {
    pub tid: u32,
    /// Samples handed on; for Arm SPE, chunks of its AUX buffer (each
    /// holding many records).
    pub samples: u64,
    pub lost_samples: u64,
    pub exited: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SampleRaw {
    pub pid: u32,
    pub duration_s: f64,
    pub threads: Vec<ThreadSamples>,
    pub process_exited: bool,
    pub problems: Vec<String>,
    /// What the AUX buffers gave, when the run read them (Arm SPE).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub aux: Option<AuxTotals>,
}

/// What reading perf's AUX buffers (Arm SPE's records) met, summed over
/// every thread: the bytes copied out, those left behind and why, and the
/// flags the kernel set on its `PERF_RECORD_AUX` records.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct AuxTotals {
    /// `PERF_RECORD_AUX` records read from the rings.
    pub chunks: u64,
    pub copied_bytes: u64,
    /// Bytes not copied because the per-second or total byte cap was
    /// reached (the buffer was still freed for the kernel).
    pub over_cap_bytes: u64,
    /// Bytes a record named that were no longer between the buffer's tail
    /// and head (already consumed, or overwritten).
    pub missed_bytes: u64,
    /// Records flagged truncated: the buffer filled and the hardware's
    /// records were dropped until it was read.
    pub truncated_chunks: u64,
    /// Records flagged partial: the last record in them is cut.
    pub partial_chunks: u64,
    /// Records flagged collision: a sample was dropped because the
    /// previous one was still being profiled.
    pub collision_chunks: u64,
    /// Ring records the kernel counted lost (`PERF_RECORD_LOST`).
    pub lost_ring_records: u64,
    /// Ring bytes skipped because what was there was not a record (never
    /// expected from the kernel).
    pub unreadable_ring_bytes: u64,
}

/// What decoding the AUX bytes into SPE records met (`decode::spe`'s
/// counts, summed).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct SpeRecordTotals {
    pub records: u64,
    /// Loads, stores and atomics with a data address: the samples tallied.
    pub memory_records: u64,
    /// Records whose events packet said the access went to another chip.
    pub remote_records: u64,
    pub unknown_packets: u64,
    /// Chunks that ended inside a packet or a record: that record dropped.
    pub cut_records: u64,
    /// Records whose Context packet (the PID, where the kernel puts it
    /// there) named another thread than the one the event was on.
    pub other_context_records: u64,
}
