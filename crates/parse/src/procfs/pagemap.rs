//! `/proc/PID/pagemap`: whether each virtual page of a process has a page
//! table entry, and of what kind.
//!
//! move_pages answers "which node"; pagemap answers "is anything there",
//! and the two disagree in ways that matter. A page the NUMA-balancing
//! scanner has marked PROT_NONE (waiting for its hinting fault) is still
//! `present` here, while move_pages on some kernels (6.1) calls it "not
//! present". A never-touched page is neither present nor swapped; a
//! swapped-out page is `swapped`. So pagemap turns move_pages' bare
//! -ENOENT/-EFAULT into "between hinting faults", "not yet touched",
//! "swapped out" or "the zero page".
//!
//! One little-endian-as-the-host 64-bit entry per page at offset
//! `address / page_size * 8` (Documentation/admin-guide/mm/pagemap.rst).
//! Reading it needs the same ptrace-read right as numa_maps; the frame
//! number is zeroed without CAP_SYS_ADMIN and is not used. It is a live
//! file, sparse and as large as the address space, so it is read by
//! offset, never whole, and never recorded into a snapshot.

/// The entry's bits (Documentation/admin-guide/mm/pagemap.rst).
pub const PRESENT: u64 = 1 << 63;
pub const SWAPPED: u64 = 1 << 62;
pub const FILE_OR_SHARED_ANON: u64 = 1 << 61;
pub const EXCLUSIVE: u64 = 1 << 56;

/// Bytes per entry.
pub const ENTRY_BYTES: u64 = 8;

/// The flags of one pagemap entry.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PagemapEntry {
    /// A page table entry maps a page (including one marked PROT_NONE for
    /// a NUMA-balancing hinting fault, and the shared zero page).
    pub present: bool,
    /// The page is in swap.
    pub swapped: bool,
    /// A file page or shared anonymous page (not private anonymous).
    pub file_or_shared_anon: bool,
    /// Mapped by this process only.
    pub exclusive: bool,
}

impl PagemapEntry {
    /// Neither present nor swapped: nothing was ever put there.
    pub fn is_empty(&self) -> bool {
        !self.present && !self.swapped
    }
}

/// Decodes one raw entry.
pub fn parse_entry(raw: u64) -> PagemapEntry {
    PagemapEntry {
        present: raw & PRESENT != 0,
        swapped: raw & SWAPPED != 0,
        file_or_shared_anon: raw & FILE_OR_SHARED_ANON != 0,
        exclusive: raw & EXCLUSIVE != 0,
    }
}

/// Decodes consecutive raw entries in the host's byte order; a trailing
/// partial entry is ignored.
pub fn parse(bytes: &[u8]) -> Vec<PagemapEntry> {
    bytes
        .chunks_exact(ENTRY_BYTES as usize)
        .map(|b| parse_entry(u64::from_ne_bytes(b.try_into().unwrap_or([0; 8]))))
        .collect()
}
