//! The pointer chase behind idle and loaded latency.
//!
//! Every cache line of the buffer holds the address of the next line to
//! visit, and the visiting order is one random cycle through all lines
//! (Sattolo's algorithm), so each load depends on the previous one and no
//! prefetcher can guess the next line: not the next-line or stride
//! prefetchers (the order jumps within and across pages at random) and not
//! out-of-order execution (the address is not known until the load ends).

use crate::rng::SplitMix64;

/// Cache line size the chase steps by. 64 bytes is the line size on x86
/// and most Arm cores; on 128-byte-line machines every other line is still
/// a separate miss because the order is random.
pub const LINE_BYTES: usize = 64;

/// A random single cycle through the lines of a buffer.
#[derive(Debug)]
pub struct ChaseCycle<'a> {
    words: &'a [u64],
    lines: usize,
    /// Address of the line the next load reads.
    position: usize,
}

impl<'a> ChaseCycle<'a> {
    /// Writes the cycle into `words` (first word of each line = address of
    /// the next line). Needs at least two lines.
    pub fn build(words: &'a mut [u64], seed: u64) -> Option<Self> {
        let per_line = LINE_BYTES / 8;
        let lines = words.len() / per_line;
        if lines < 2 {
            return None;
        }
        // Start from "line i points to line i" and let Sattolo's swaps turn
        // it into one cycle; only ever swapping with a strictly earlier
        // index is what guarantees a single cycle.
        for line in 0..lines {
            words[line * per_line] = line as u64;
        }
        let mut rng = SplitMix64::new(seed);
        for i in (1..lines).rev() {
            let j = rng.below(i);
            words.swap(i * per_line, j * per_line);
        }
        let base = words.as_ptr() as usize;
        for line in 0..lines {
            let next = words[line * per_line] as usize;
            words[line * per_line] = (base + next * LINE_BYTES) as u64;
        }
        let words: &'a [u64] = words;
        Some(ChaseCycle {
            words,
            lines,
            position: base,
        })
    }

    /// Walks a cycle that [`ChaseCycle::build`] already wrote, from its
    /// first line.
    ///
    /// # Safety
    /// `words` must be exactly the slice a `build` call wrote, at the same
    /// address, unmodified since.
    pub unsafe fn resume(words: &'a [u64]) -> Self {
        let lines = words.len() / (LINE_BYTES / 8);
        ChaseCycle {
            words,
            lines,
            position: words.as_ptr() as usize,
        }
    }

    pub fn lines(&self) -> usize {
        self.lines
    }

    /// Follows `loads` dependent pointers and returns the line it ended on
    /// (as an index), which the caller may ignore; returning it keeps the
    /// loads from being optimised away.
    pub fn walk(&mut self, loads: usize) -> usize {
        let mut p = self.position as *const u64;
        let mut left = loads;
        // SAFETY: `build` made every line's first word the address of a
        // line inside `self.words`, which this cycle borrows for `'a`, so
        // every pointer followed is in bounds, aligned and initialised.
        unsafe {
            while left >= 8 {
                p = *p as *const u64;
                p = *p as *const u64;
                p = *p as *const u64;
                p = *p as *const u64;
                p = *p as *const u64;
                p = *p as *const u64;
                p = *p as *const u64;
                p = *p as *const u64;
                left -= 8;
            }
            while left > 0 {
                p = *p as *const u64;
                left -= 1;
            }
        }
        self.position = std::hint::black_box(p) as usize;
        (self.position - self.words.as_ptr() as usize) / LINE_BYTES
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn visit_all(lines: usize, seed: u64) -> Vec<usize> {
        let mut words = vec![0u64; lines * LINE_BYTES / 8];
        let mut cycle = ChaseCycle::build(&mut words, seed).unwrap();
        (0..lines).map(|_| cycle.walk(1)).collect()
    }

    proptest! {
        /// One cycle covering every line exactly once, back to the start.
        #[test]
        fn single_cycle_through_every_line(lines in 2usize..3000, seed: u64) {
            let order = visit_all(lines, seed);
            let mut seen = vec![false; lines];
            for &line in &order {
                prop_assert!(!seen[line], "line {} visited twice before the cycle closed", line);
                seen[line] = true;
            }
            prop_assert_eq!(*order.last().unwrap(), 0, "the walk must return to the first line");
        }
    }

    #[test]
    fn order_is_not_sequential() {
        // Pages of 64 lines: successive lines should rarely be neighbours.
        let order = visit_all(1 << 14, 1);
        let neighbours = order.windows(2).filter(|w| w[0].abs_diff(w[1]) == 1).count();
        assert!(neighbours < 16, "{neighbours} sequential steps");
        let same_page = order.windows(2).filter(|w| w[0] / 64 == w[1] / 64).count();
        assert!(same_page < 64, "{same_page} steps stay in one page");
    }

    #[test]
    fn too_small_for_a_cycle() {
        let mut words = vec![0u64; LINE_BYTES / 8];
        assert!(ChaseCycle::build(&mut words, 0).is_none());
    }
}
