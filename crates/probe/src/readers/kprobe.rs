//! Opens of the lock files seen by kprobes on the kernel functions behind
//! them, through perf's dynamic `kprobe` PMU: no tracefs, no name to read,
//! and every call, even from a process that lives a millisecond.
//!
//! Where a file has its own open function (`slabinfo_open`,
//! `pid_smaps_open`, …) each hit is one open. `/proc/pagetypeinfo` has
//! none (the generic seq_file open serves it), so its per-node show
//! function is probed, and `/proc/kpageflags` / `kpagecount` are read by
//! their read functions; for those, hits of one thread less than
//! [`SAME_READ`] apart are one read. These are static functions: a kernel
//! that renamed or inlined one refuses its probe, and `readers` then falls
//! back to the tracepoint, saying which function was missing.

use std::collections::HashMap;
use std::time::Duration;

use numasleuth_model::readers::LockFile;

/// Hits of one thread on a per-call function closer than this are one
/// read (a read of pagetypeinfo calls its show function once per node).
pub const SAME_READ: Duration = Duration::from_millis(100);

/// Where the kernel's dynamic kprobe PMU announces its perf type.
pub const PMU_TYPE: &str = "sys/bus/event_source/devices/kprobe/type";

/// The function probed for `file`, and whether it runs once per open.
pub fn function(file: LockFile) -> (&'static str, bool) {
    match file {
        LockFile::Slabinfo => ("slabinfo_open", true),
        LockFile::Pagetypeinfo => ("pagetypeinfo_show", false),
        LockFile::Smaps => ("pid_smaps_open", true),
        LockFile::SmapsRollup => ("smaps_rollup_open", true),
        LockFile::NumaMaps => ("pid_numa_maps_open", true),
        LockFile::Kpageflags => ("kpageflags_read", false),
        LockFile::Kpagecount => ("kpagecount_read", false),
    }
}

/// Folds per-call hits into reads: remembers each (thread, file)'s last
/// hit, for at most [`MAX_THREADS`] pairs.
#[derive(Debug, Default)]
pub struct Reads {
    last_ns: HashMap<(u32, LockFile), u64>,
}

/// (thread, file) pairs remembered for folding.
pub const MAX_THREADS: usize = 65_536;

impl Reads {
    /// Whether a hit at `t_ns` starts a new open of `file` by `tid`.
    pub fn starts_open(&mut self, tid: u32, file: LockFile, t_ns: u64) -> bool {
        if function(file).1 {
            return true;
        }
        let key = (tid, file);
        let new = match self.last_ns.get(&key) {
            Some(last) => t_ns.saturating_sub(*last) >= SAME_READ.as_nanos() as u64,
            None => true,
        };
        // A long watch (`serve`) starts over rather than grow: at worst one
        // read is then counted twice.
        if self.last_ns.len() >= MAX_THREADS && !self.last_ns.contains_key(&key) {
            self.last_ns.clear();
        }
        self.last_ns.insert(key, t_ns);
        new
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn per_open_functions_count_every_hit() {
        let mut reads = Reads::default();
        for t in [0, 1, 2] {
            assert!(reads.starts_open(5, LockFile::Slabinfo, t));
        }
    }

    #[test]
    fn per_call_hits_of_one_read_are_folded() {
        let mut reads = Reads::default();
        let ms = 1_000_000;
        // Two nodes' show calls of one read, then the next read 200 ms on.
        assert!(reads.starts_open(5, LockFile::Pagetypeinfo, 10 * ms));
        assert!(!reads.starts_open(5, LockFile::Pagetypeinfo, 11 * ms));
        assert!(reads.starts_open(6, LockFile::Pagetypeinfo, 11 * ms), "another thread");
        assert!(reads.starts_open(5, LockFile::Pagetypeinfo, 211 * ms));
        assert!(reads.starts_open(5, LockFile::Kpageflags, 212 * ms), "another file");
        // A long burst of reads: each hit extends it.
        for t in 1..50 {
            assert!(!reads.starts_open(5, LockFile::Kpageflags, 212 * ms + t * 50 * ms));
        }
    }
}
