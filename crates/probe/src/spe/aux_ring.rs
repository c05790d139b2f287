//! The arithmetic of perf's AUX area, pure so that it is tested here,
//! where no machine has SPE.
//!
//! An AUX event has two buffers: the usual ring of records, and the AUX
//! area the hardware writes its own data into. Each time the kernel closes
//! a stretch of AUX data (a buffer fill, the thread being switched out, a
//! disable) it puts a `PERF_RECORD_AUX` in the ring: where the stretch
//! starts, as a running offset that only grows, how long it is, and flags.
//! The reader copies that stretch out of the area (it may wrap round the
//! area's end) and moves `aux_tail` past it, which gives the space back.
//! `aux_head` is how far the kernel has written: bytes past it, or before
//! `aux_tail`, are not the record's to give.

use std::ops::Range;

/// `PERF_RECORD_AUX` flags (`PERF_AUX_FLAG_*` in linux/perf_event.h).
pub const FLAG_TRUNCATED: u64 = 0x01;
pub const FLAG_PARTIAL: u64 = 0x04;
pub const FLAG_COLLISION: u64 = 0x08;

/// `perf_event_header.type` values read here.
const RECORD_LOST: u32 = 2;
const RECORD_AUX: u32 = 11;
/// Bytes of `perf_event_header`: u32 type, u16 misc, u16 size.
pub const HEADER_BYTES: usize = 8;

/// One record of the ring, as far as the AUX reader cares.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RingRecord {
    Aux(AuxRecord),
    /// `PERF_RECORD_LOST`: records the ring had no room for.
    Lost {
        records: u64,
    },
    /// Any other record (`ITRACE_START`, …), or one too short to read.
    Other,
}

/// A `PERF_RECORD_AUX`: new data in the AUX area.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AuxRecord {
    /// Where the data starts, a running offset (wrapped by the area size
    /// only when copying).
    pub offset: u64,
    pub bytes: u64,
    pub flags: u64,
    /// From the record's `sample_id` (the event samples TID and CPU with
    /// `sample_id_all`): the thread and CPU the data was written on.
    pub tid: Option<u32>,
    pub cpu: Option<u32>,
}

/// The `size` field of a record header, from its 8 bytes.
pub fn record_size(header: &[u8; HEADER_BYTES]) -> u16 {
    u16::from_le_bytes([header[6], header[7]])
}

/// Reads one whole record, header first (`record.len()` is its `size`).
/// The event is opened with `sample_id_all` and `TID | CPU`, so after an
/// AUX record's three u64s come pid, tid (u32 each), then cpu and a
/// reserved u32.
pub fn parse_record(record: &[u8]) -> RingRecord {
    let u32_at = |at: usize| {
        record
            .get(at..at + 4)
            .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    };
    let u64_at = |at: usize| {
        record
            .get(at..at + 8)
            .map(|b| u64::from_le_bytes([b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]]))
    };
    match u32_at(0) {
        Some(RECORD_AUX) => {
            let (Some(offset), Some(bytes), Some(flags)) = (u64_at(8), u64_at(16), u64_at(24)) else {
                return RingRecord::Other;
            };
            RingRecord::Aux(AuxRecord {
                offset,
                bytes,
                flags,
                tid: u32_at(36),
                cpu: u32_at(40),
            })
        }
        // u64 id, then u64 lost.
        Some(RECORD_LOST) => match u64_at(16) {
            Some(records) => RingRecord::Lost { records },
            None => RingRecord::Other,
        },
        _ => RingRecord::Other,
    }
}

/// The bytes `len` bytes from running offset `start` occupy in an area of
/// `area_bytes`: the part up to the area's end, then the part wrapped to
/// its start (empty unless it wraps). `len` is at most `area_bytes`.
pub fn wrapped(start: u64, len: u64, area_bytes: u64) -> (Range<usize>, Range<usize>) {
    if area_bytes == 0 {
        return (0..0, 0..0);
    }
    let len = len.min(area_bytes);
    let at = start % area_bytes;
    let first_len = len.min(area_bytes - at);
    // Both within the area, which is mapped, so they fit a usize.
    let first = at as usize..(at + first_len) as usize;
    let second = 0..(len - first_len) as usize;
    (first, second)
}

/// What to copy for one AUX record, and where the tail goes after.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CopyPlan {
    /// Area ranges, in order; the second is empty unless the data wraps.
    pub first: Range<usize>,
    pub second: Range<usize>,
    /// Bytes the record names that are not there to copy: before the
    /// tail (consumed already), past the head, or older than one area's
    /// worth behind the head (overwritten).
    pub missed_bytes: u64,
    /// The new `aux_tail`: past this record's data, never past the head,
    /// never backwards.
    pub new_tail: u64,
}

impl CopyPlan {
    pub fn bytes(&self) -> u64 {
        (self.first.len() + self.second.len()) as u64
    }
}

/// Plans the copy of `record`'s data from an area of `area_bytes` whose
/// tail and head are `tail` and `head` (running offsets).
pub fn plan_copy(record: &AuxRecord, tail: u64, head: u64, area_bytes: u64) -> CopyPlan {
    let end = record.offset.saturating_add(record.bytes).min(head);
    let oldest = head.saturating_sub(area_bytes);
    let start = record.offset.max(tail).max(oldest);
    let len = end.saturating_sub(start);
    let (first, second) = if len > 0 {
        wrapped(start, len, area_bytes)
    } else {
        (0..0, 0..0)
    };
    let copied = (first.len() + second.len()) as u64;
    CopyPlan {
        first,
        second,
        missed_bytes: record.bytes.saturating_sub(copied),
        new_tail: tail.max(end),
    }
}

/// The caps on AUX bytes copied: per second and in all. Checked per
/// record, all or nothing, so a record's bytes are never cut by a cap.
#[derive(Debug, Clone)]
pub struct ByteBudget {
    per_second_bytes: u64,
    total_bytes: u64,
    window_start_ns: u64,
    window_bytes: u64,
    taken_bytes: u64,
}

const NS_PER_SECOND: u64 = 1_000_000_000;

impl ByteBudget {
    pub fn new(per_second_bytes: u64, total_bytes: u64) -> Self {
        ByteBudget {
            per_second_bytes,
            total_bytes,
            window_start_ns: 0,
            window_bytes: 0,
            taken_bytes: 0,
        }
    }

    /// Whether `bytes` more may be copied at `now_ns` (since the run
    /// began); counted when so.
    pub fn take(&mut self, now_ns: u64, bytes: u64) -> bool {
        if now_ns.saturating_sub(self.window_start_ns) >= NS_PER_SECOND {
            self.window_start_ns = now_ns;
            self.window_bytes = 0;
        }
        let in_window = self.window_bytes.saturating_add(bytes);
        let in_total = self.taken_bytes.saturating_add(bytes);
        if in_window > self.per_second_bytes || in_total > self.total_bytes {
            return false;
        }
        self.window_bytes = in_window;
        self.taken_bytes = in_total;
        true
    }
}

#[cfg(test)]
#[path = "aux_ring_tests.rs"]
mod tests;
