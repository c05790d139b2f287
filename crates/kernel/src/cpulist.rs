//! CPU and node lists in the syntax numactl and the kernel write
//! (`0-3,8,10-11`), and the hex masks of `cpumap` (`00000000,0000000f`).
//!
//! Sets are sorted vectors of ids, so there is no 64- or 1024-CPU ceiling as
//! with `cpu_set_t`; machines with thousands of CPUs parse the same way.

use std::fmt;

use serde::Serialize;

use crate::error::ParseError;

/// A sorted set of CPU or node ids without duplicates.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(transparent)]
pub struct IdList(Vec<u32>);

/// Ids above this are not real CPU or node numbers; refusing them keeps a
/// garbage range such as `0-4000000000` from allocating gigabytes.
pub const MAX_ID: u32 = 1 << 20;

impl IdList {
    pub fn new(mut ids: Vec<u32>) -> Self {
        ids.sort_unstable();
        ids.dedup();
        IdList(ids)
    }

    pub fn ids(&self) -> &[u32] {
        &self.0
    }

    pub fn len(&self) -> usize {
        self.0.len()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    pub fn contains(&self, id: u32) -> bool {
        self.0.binary_search(&id).is_ok()
    }

    pub fn iter(&self) -> impl Iterator<Item = u32> + '_ {
        self.0.iter().copied()
    }

    pub fn intersection(&self, other: &IdList) -> IdList {
        IdList(self.iter().filter(|id| other.contains(*id)).collect())
    }

    pub fn difference(&self, other: &IdList) -> IdList {
        IdList(self.iter().filter(|id| !other.contains(*id)).collect())
    }

    pub fn is_subset(&self, other: &IdList) -> bool {
        self.iter().all(|id| other.contains(id))
    }

    /// Parses `0-3,8,10-11`. Whitespace around the list (the trailing
    /// newline of a sysfs file) is ignored; an empty list is valid and empty.
    ///
    /// Ranges are merged before they are expanded, so repeating a long range
    /// (`0-1048576,0-1048576,…`) costs its ids once, not once per repeat.
    pub fn parse(text: &str) -> Result<Self, ParseError> {
        let text = text.trim();
        let mut ranges = Vec::new();
        if text.is_empty() {
            return Ok(IdList(Vec::new()));
        }
        for part in text.split(',') {
            let part = part.trim();
            let (first, last) = match part.split_once('-') {
                Some((a, b)) => (parse_id(a, part)?, parse_id(b, part)?),
                None => {
                    let id = parse_id(part, part)?;
                    (id, id)
                }
            };
            if first > last {
                return Err(ParseError::new(format!("range `{part}` runs backwards")));
            }
            ranges.push((first, last));
        }
        ranges.sort_unstable();
        let mut ids: Vec<u32> = Vec::new();
        for (first, last) in ranges {
            // Ids are at most MAX_ID, so `top + 1` cannot overflow.
            let from = match ids.last() {
                Some(&top) if top >= first => top + 1,
                _ => first,
            };
            if from <= last {
                ids.extend(from..=last);
            }
        }
        Ok(IdList(ids))
    }

    /// Parses a kernel bitmap such as `00000000,0000000f`: comma-separated
    /// 32-bit hex words, most significant first.
    pub fn parse_mask(text: &str) -> Result<Self, ParseError> {
        let text = text.trim();
        if text.is_empty() {
            return Err(ParseError::new("empty CPU mask"));
        }
        let words: Vec<&str> = text.split(',').collect();
        let mut ids = Vec::new();
        for (index_from_right, word) in words.iter().rev().enumerate() {
            let word = word.trim().trim_start_matches("0x");
            let value = u32::from_str_radix(word, 16)
                .map_err(|_| ParseError::new(format!("`{word}` is not a 32-bit hex mask word")))?;
            let base = u32::try_from(index_from_right * 32)
                .ok()
                .filter(|b| *b < MAX_ID)
                .ok_or_else(|| ParseError::new("CPU mask is implausibly long"))?;
            ids.extend((0..32).filter(|bit| value & (1 << bit) != 0).map(|bit| base + bit));
        }
        Ok(IdList::new(ids))
    }
}

fn parse_id(text: &str, part: &str) -> Result<u32, ParseError> {
    let id: u32 = text
        .trim()
        .parse()
        .map_err(|_| ParseError::new(format!("`{part}` is not a CPU/node list entry (expected N or N-M)")))?;
    if id > MAX_ID {
        return Err(ParseError::new(format!("id {id} in `{part}` is implausibly large")));
    }
    Ok(id)
}

impl FromIterator<u32> for IdList {
    fn from_iter<T: IntoIterator<Item = u32>>(iter: T) -> Self {
        IdList::new(iter.into_iter().collect())
    }
}

/// Compact numactl form: consecutive runs collapse to `a-b`.
impl fmt::Display for IdList {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut first = true;
        let mut i = 0;
        while i < self.0.len() {
            let start = self.0[i];
            let mut end = start;
            while i + 1 < self.0.len() && self.0[i + 1] == end + 1 {
                i += 1;
                end = self.0[i];
            }
            if !first {
                f.write_str(",")?;
            }
            first = false;
            if start == end {
                write!(f, "{start}")?;
            } else {
                write!(f, "{start}-{end}")?;
            }
            i += 1;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn parses_numactl_syntax() {
        let list = IdList::parse("0-3,8,10-11\n").unwrap();
        assert_eq!(list.ids(), &[0, 1, 2, 3, 8, 10, 11]);
        assert_eq!(list.to_string(), "0-3,8,10-11");
    }

    #[test]
    fn empty_file_is_an_empty_set() {
        // A CPU-less node's cpulist is a bare newline.
        assert!(IdList::parse("\n").unwrap().is_empty());
    }

    #[test]
    fn beyond_1024_cpus() {
        let list = IdList::parse("0-4095").unwrap();
        assert_eq!(list.len(), 4096);
        assert_eq!(list.to_string(), "0-4095");
    }

    #[test]
    fn garbage_is_an_error() {
        assert!(IdList::parse("zero-three").is_err());
        assert!(IdList::parse("3-1").is_err());
        assert!(IdList::parse("1,,2").is_err());
        assert!(IdList::parse("0-99999999999").is_err());
    }

    #[test]
    fn masks_are_most_significant_word_first() {
        // node0/cpumap of a 64-CPU machine with CPUs 0-3 and 32.
        let list = IdList::parse_mask("00000001,0000000f\n").unwrap();
        assert_eq!(list.ids(), &[0, 1, 2, 3, 32]);
        assert!(IdList::parse_mask("xyz").is_err());
    }

    proptest! {
        #[test]
        fn never_panics(text in ".{0,64}") {
            let _ = IdList::parse(&text);
            let _ = IdList::parse_mask(&text);
        }

        #[test]
        fn display_round_trips(ids in proptest::collection::vec(0u32..5000, 0..200)) {
            let list = IdList::new(ids);
            prop_assert_eq!(IdList::parse(&list.to_string()).unwrap(), list);
        }
    }

    /// Found while writing the `cpulist` fuzz harness, and confirmed with it
    /// (fuzz/regressions/cpulist/repeated-long-range): 400 copies of the
    /// longest allowed range, a 4 KB file, expanded every copy before
    /// deduplicating and asked for more than 2 GB.
    #[test]
    fn repeated_ranges_cost_their_ids_once() {
        let text = vec!["0-1048576"; 400].join(",");
        let list = IdList::parse(&text).unwrap();
        assert_eq!(list.len(), 1_048_577);
        // Before the fix the vector held every copy: 400 × 1048577 slots.
        assert!(list.0.capacity() <= 2 * list.len(), "capacity {}", list.0.capacity());
        let overlapping = IdList::parse("8-10,0-3,2-9,3,12").unwrap();
        assert_eq!(overlapping.ids(), &[0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 12]);
    }
}
