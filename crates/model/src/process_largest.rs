//! The mappings `inspect` lists beyond sections, heap and stack: the
//! `limit` with the most resident bytes, the earlier one first among
//! equals. A heap keeps the weakest on top, so a mapping that would not
//! make the list is turned away before anything is built for it: a
//! process with 50,000 small mappings then costs one comparison each, not
//! one listing entry each.

use std::cmp::{Ordering, Reverse};
use std::collections::BinaryHeap;

use crate::process::MappingUsage;

pub(super) struct Largest {
    limit: usize,
    /// Arrival order, which is address order: the tie-break.
    arrivals: u64,
    weakest_on_top: BinaryHeap<Reverse<Ranked>>,
    turned_away: u64,
}

struct Ranked {
    bytes: u64,
    arrival: u64,
    usage: MappingUsage,
}

impl Ranked {
    /// Stronger is more bytes, then earlier.
    fn strength(&self) -> (u64, Reverse<u64>) {
        (self.bytes, Reverse(self.arrival))
    }
}

impl PartialEq for Ranked {
    fn eq(&self, other: &Self) -> bool {
        self.strength() == other.strength()
    }
}
impl Eq for Ranked {}
impl PartialOrd for Ranked {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Ranked {
    fn cmp(&self, other: &Self) -> Ordering {
        self.strength().cmp(&other.strength())
    }
}

impl Largest {
    pub(super) fn new(limit: usize) -> Self {
        Largest {
            limit,
            arrivals: 0,
            weakest_on_top: BinaryHeap::new(),
            turned_away: 0,
        }
    }

    /// Offers the next mapping, of `bytes` resident bytes; `build` is
    /// called only if it makes the list.
    pub(super) fn offer(&mut self, bytes: u64, build: impl FnOnce() -> MappingUsage) {
        let arrival = self.arrivals;
        self.arrivals += 1;
        if self.limit == 0 {
            self.turned_away += 1;
            return;
        }
        if self.weakest_on_top.len() == self.limit {
            // An equal newcomer arrived later, so it is the weaker.
            match self.weakest_on_top.peek() {
                Some(Reverse(weakest)) if bytes > weakest.bytes => {
                    self.weakest_on_top.pop();
                }
                _ => {
                    self.turned_away += 1;
                    return;
                }
            }
            self.turned_away += 1;
        }
        let usage = build();
        self.weakest_on_top.push(Reverse(Ranked { bytes, arrival, usage }));
    }

    /// The listed mappings (in no particular order) and how many were
    /// turned away.
    pub(super) fn finish(self) -> (Vec<MappingUsage>, u64) {
        let listed = self.weakest_on_top.into_iter().map(|Reverse(r)| r.usage).collect();
        (listed, self.turned_away)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::process::{Accuracy, MemoryKind};

    fn usage(start: u64) -> MappingUsage {
        MappingUsage {
            start,
            end: start + 4096,
            kind: MemoryKind::Anon,
            object: None,
            section: None,
            perms: Default::default(),
            policy: None,
            pages_by_node: Default::default(),
            counted_pages_by_node: Default::default(),
            hinting_fault_pages: 0,
            page_size_bytes: 4096,
            accuracy: Accuracy::PerVma,
        }
    }

    fn starts(largest: Largest) -> (Vec<u64>, u64) {
        let (listed, away) = largest.finish();
        let mut starts: Vec<u64> = listed.iter().map(|u| u.start).collect();
        starts.sort_unstable();
        (starts, away)
    }

    #[test]
    fn keeps_the_most_bytes_and_the_earliest_among_equals() {
        let mut largest = Largest::new(3);
        for (start, bytes) in [(1, 10), (2, 30), (3, 10), (4, 20), (5, 10), (6, 30)] {
            largest.offer(bytes, || usage(start));
        }
        // 30, 30 and 20; of the three 10s none is left.
        assert_eq!(starts(largest), (vec![2, 4, 6], 3));
        let mut ties = Largest::new(2);
        for start in 1..=5 {
            ties.offer(7, || usage(start));
        }
        assert_eq!(starts(ties), (vec![1, 2], 3));
    }

    #[test]
    fn a_turned_away_mapping_is_never_built() {
        let mut largest = Largest::new(1);
        largest.offer(5, || usage(1));
        largest.offer(5, || panic!("built a mapping that cannot make the list"));
        largest.offer(1, || panic!("built a mapping that cannot make the list"));
        assert_eq!(starts(largest), (vec![1], 2));
        let mut none = Largest::new(0);
        none.offer(9, || panic!("a zero limit lists nothing"));
        assert_eq!(starts(none), (vec![], 1));
    }

    #[test]
    fn matches_sorting_everything() {
        // Against the obvious version: a stable sort by bytes, descending.
        let sizes: Vec<u64> = (0..500u64).map(|i| (i * 7919) % 37).collect();
        for limit in [0, 1, 5, 36, 499, 500, 600] {
            let mut largest = Largest::new(limit);
            for (i, bytes) in sizes.iter().enumerate() {
                largest.offer(*bytes, || usage(i as u64));
            }
            let mut order: Vec<(u64, u64)> = sizes.iter().enumerate().map(|(i, b)| (i as u64, *b)).collect();
            order.sort_by_key(|(_, b)| Reverse(*b));
            let mut expected: Vec<u64> = order.iter().take(limit).map(|(i, _)| *i).collect();
            expected.sort_unstable();
            let away = sizes.len().saturating_sub(limit) as u64;
            assert_eq!(starts(largest), (expected, away), "limit {limit}");
        }
    }
}
