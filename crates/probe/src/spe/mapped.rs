//! One AUX event's two mappings: its ring of records and its AUX area,
//! mapped by hand because perf-event2's `Sampler` maps the ring only and
//! keeps its metadata page to itself.
//!
//! The kernel writes both while we read; only the control words are
//! shared live (`data_head`, `aux_head` are the kernel's, `data_tail`,
//! `aux_tail` ours), read and written as atomics with acquire and release
//! order, as perf's own tool does. Bytes are copied out between tail and
//! head, which the kernel does not touch until the tail moves past them,
//! and everything after the copy is [`super::aux_ring`]'s pure arithmetic.

use std::os::fd::AsRawFd;
use std::sync::atomic::{AtomicU64, Ordering};

use perf_event::Counter;
use perf_event_open_sys::bindings::perf_event_mmap_page;

use super::aux_ring::{self, RingRecord, HEADER_BYTES};

/// Records one drain pass takes from the ring at most (as `ring` does for
/// sample rings): the caller looks at its deadline between passes.
pub const MAX_RING_RECORDS_PER_PASS: usize = 4096;

/// A mapping made with `mmap`, unmapped on drop.
struct Mapping {
    base: *mut u8,
    bytes: usize,
}

impl Mapping {
    fn new(fd: i32, bytes: usize, offset: u64) -> std::io::Result<Mapping> {
        let offset = libc::off_t::try_from(offset).map_err(|_| std::io::Error::from_raw_os_error(libc::EOVERFLOW))?;
        // SAFETY: a fresh shared mapping of the perf fd; the kernel checks
        // the length and offset, and nothing aliases it yet.
        let base = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                bytes,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED,
                fd,
                offset,
            )
        };
        if base == libc::MAP_FAILED {
            return Err(std::io::Error::last_os_error());
        }
        Ok(Mapping {
            base: base.cast(),
            bytes,
        })
    }
}

impl Drop for Mapping {
    fn drop(&mut self) {
        // SAFETY: `base` and `bytes` are exactly what mmap returned and
        // took; no reference into the mapping outlives `self`.
        unsafe { libc::munmap(self.base.cast(), self.bytes) };
    }
}

/// An event with its ring and AUX area mapped. Dropped in field order:
/// the AUX area, then the ring, then the event's descriptor.
pub struct AuxEvent {
    /// `None` only in tests, which drain a software event's ring (no PMU
    /// here has an AUX area).
    aux: Option<Mapping>,
    ring: Mapping,
    pub counter: Counter,
    data_offset: u64,
    data_bytes: u64,
    /// Kept between passes so a drain allocates only when a record or a
    /// chunk is longer than any before.
    scratch: Vec<u8>,
    aux_scratch: Vec<u8>,
}

/// One AUX record's data, copied out, and what the record said.
pub struct Chunk<'a> {
    pub record: aux_ring::AuxRecord,
    pub bytes: &'a [u8],
}

/// What one drain pass did besides handing chunks on.
#[derive(Debug, Default, Clone, Copy)]
pub struct PassCounts {
    pub ring_records: usize,
    /// AUX records read, with or without bytes to copy, and how many of
    /// them carried each flag.
    pub aux_records: u64,
    pub truncated: u64,
    pub partial: u64,
    pub collision: u64,
    pub copied_bytes: u64,
    pub lost_ring_records: u64,
    /// Ring bytes skipped because a header there was not a record's (never
    /// expected from the kernel).
    pub unreadable_ring_bytes: u64,
    pub missed_bytes: u64,
    pub over_cap_bytes: u64,
}

impl AuxEvent {
    /// Maps `counter`'s ring (a metadata page and `data_pages` pages) and
    /// an AUX area of `aux_bytes` (whole pages, a power of two of them)
    /// behind it, none when 0. The event must still be disabled: the SPE
    /// driver starts it only once the AUX area exists.
    pub fn map(counter: Counter, data_pages: usize, aux_bytes: usize) -> std::io::Result<AuxEvent> {
        let page_bytes = numasleuth_kernel::pages::page_size_bytes() as usize;
        let fd = counter.as_raw_fd();
        let ring_bytes = (1 + data_pages) * page_bytes;
        let ring = Mapping::new(fd, ring_bytes, 0)?;
        let page = ring.base.cast::<perf_event_mmap_page>();
        // SAFETY: the first page of a perf ring is a perf_event_mmap_page;
        // these fields are the reader's to read and, for aux_*, to set
        // before the AUX mmap (the kernel reads them in that call).
        let (data_offset, data_bytes) = unsafe {
            let data_offset = match (*page).data_offset {
                0 => page_bytes as u64,
                offset => offset,
            };
            let data_bytes = match (*page).data_size {
                0 => (data_pages * page_bytes) as u64,
                size => size,
            };
            (*page).aux_offset = data_offset + data_bytes;
            (*page).aux_size = aux_bytes as u64;
            (data_offset, data_bytes)
        };
        if data_bytes == 0 || data_offset.saturating_add(data_bytes) > ring_bytes as u64 {
            // The kernel's data area must lie inside what was mapped, or
            // reading it would stray outside the mapping.
            return Err(std::io::Error::from_raw_os_error(libc::EINVAL));
        }
        // PROT_WRITE on the AUX area asks for the non-overwrite mode: the
        // kernel stops at aux_tail and flags the records truncated.
        let aux = match aux_bytes {
            0 => None,
            bytes => Some(Mapping::new(fd, bytes, data_offset + data_bytes)?),
        };
        Ok(AuxEvent {
            aux,
            ring,
            counter,
            data_offset,
            data_bytes,
            scratch: Vec::new(),
            aux_scratch: Vec::new(),
        })
    }

    /// A live control word of the metadata page.
    fn word(&self, field: Field) -> &AtomicU64 {
        let page = self.ring.base.cast::<perf_event_mmap_page>();
        // SAFETY: only the field's address is taken (no read, no
        // reference); `page` points at the mapped metadata page.
        let word = unsafe {
            match field {
                Field::DataHead => std::ptr::addr_of_mut!((*page).data_head),
                Field::DataTail => std::ptr::addr_of_mut!((*page).data_tail),
                Field::AuxHead => std::ptr::addr_of_mut!((*page).aux_head),
                Field::AuxTail => std::ptr::addr_of_mut!((*page).aux_tail),
            }
        };
        // SAFETY: `word` points at an 8-aligned u64 of the metadata page,
        // which lives as long as `self`; the kernel accesses it
        // atomically too.
        unsafe { AtomicU64::from_ptr(word) }
    }

    /// Copies `len` bytes from running offset `start` of an area (the
    /// ring's data or the AUX area) into `out`, wrapping at its end.
    fn copy_wrapped(area: *const u8, area_bytes: u64, start: u64, len: u64, out: &mut Vec<u8>) {
        out.clear();
        let (first, second) = aux_ring::wrapped(start, len, area_bytes);
        for range in [first, second] {
            if range.is_empty() {
                continue;
            }
            // SAFETY: `wrapped` keeps both ranges inside the area, which is
            // mapped for `area_bytes`; these bytes lie between tail and
            // head, which the kernel does not write until the tail moves.
            let part = unsafe { std::slice::from_raw_parts(area.add(range.start), range.len()) };
            out.extend_from_slice(part);
        }
    }

    /// One bounded pass: each ring record read; for each AUX record its
    /// data copied out (if `budget` allows) and handed to `each`, and the
    /// AUX tail moved past it; then the ring's tail moved on.
    pub fn drain(
        &mut self,
        budget: &mut aux_ring::ByteBudget,
        now_ns: u64,
        each: &mut dyn FnMut(Chunk<'_>),
    ) -> PassCounts {
        let mut counts = PassCounts::default();
        let head = self.word(Field::DataHead).load(Ordering::Acquire);
        let mut tail = self.word(Field::DataTail).load(Ordering::Relaxed);
        // SAFETY: data_offset lies within the ring mapping (the kernel set
        // it, or it is the first page after the metadata).
        let data = unsafe { self.ring.base.add(self.data_offset as usize) };
        let mut record = std::mem::take(&mut self.scratch);
        let mut aux_bytes = std::mem::take(&mut self.aux_scratch);
        while tail < head && counts.ring_records < MAX_RING_RECORDS_PER_PASS {
            Self::copy_wrapped(data, self.data_bytes, tail, HEADER_BYTES as u64, &mut record);
            let header: [u8; HEADER_BYTES] = record.as_slice().try_into().unwrap_or([0; HEADER_BYTES]);
            let size = u64::from(aux_ring::record_size(&header));
            if size < HEADER_BYTES as u64 || size > head - tail {
                // Not a record the kernel wrote: skip what is there.
                counts.unreadable_ring_bytes = head - tail;
                tail = head;
                break;
            }
            Self::copy_wrapped(data, self.data_bytes, tail, size, &mut record);
            match aux_ring::parse_record(&record) {
                RingRecord::Aux(aux) => self.take_aux(aux, budget, now_ns, &mut aux_bytes, &mut counts, each),
                RingRecord::Lost { records } => {
                    counts.lost_ring_records = counts.lost_ring_records.saturating_add(records)
                }
                RingRecord::Other => {}
            }
            tail += size;
            counts.ring_records += 1;
        }
        self.scratch = record;
        self.aux_scratch = aux_bytes;
        self.word(Field::DataTail).store(tail, Ordering::Release);
        counts
    }

    fn take_aux(
        &self,
        aux: aux_ring::AuxRecord,
        budget: &mut aux_ring::ByteBudget,
        now_ns: u64,
        bytes: &mut Vec<u8>,
        counts: &mut PassCounts,
        each: &mut dyn FnMut(Chunk<'_>),
    ) {
        let head = self.word(Field::AuxHead).load(Ordering::Acquire);
        let tail_word = self.word(Field::AuxTail);
        let (area, area_bytes) = self
            .aux
            .as_ref()
            .map_or((std::ptr::null_mut(), 0), |m| (m.base, m.bytes as u64));
        let plan = aux_ring::plan_copy(&aux, tail_word.load(Ordering::Relaxed), head, area_bytes);
        counts.aux_records += 1;
        let flagged = |flag: u64| u64::from(aux.flags & flag != 0);
        counts.truncated += flagged(aux_ring::FLAG_TRUNCATED);
        counts.partial += flagged(aux_ring::FLAG_PARTIAL);
        counts.collision += flagged(aux_ring::FLAG_COLLISION);
        counts.missed_bytes = counts.missed_bytes.saturating_add(plan.missed_bytes);
        if plan.bytes() > 0 {
            if budget.take(now_ns, plan.bytes()) {
                let start = plan.first.start as u64;
                Self::copy_wrapped(area, area_bytes, start, plan.bytes(), bytes);
                counts.copied_bytes = counts.copied_bytes.saturating_add(plan.bytes());
                each(Chunk { record: aux, bytes });
            } else {
                counts.over_cap_bytes = counts.over_cap_bytes.saturating_add(plan.bytes());
            }
        }
        tail_word.store(plan.new_tail, Ordering::Release);
    }
}

/// The metadata page's live control words.
#[derive(Clone, Copy)]
enum Field {
    DataHead,
    DataTail,
    AuxHead,
    AuxTail,
}

#[cfg(test)]
#[path = "mapped_tests.rs"]
mod tests;
