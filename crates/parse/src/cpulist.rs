//! CPU and node lists in the syntax numactl and the kernel write
//! (`0-3,8,10-11`), and the hex masks of `cpumap` (`00000000,0000000f`).
//!
//! Sets are sorted vectors of ids, so there is no 64- or 1024-CPU ceiling as
//! with `cpu_set_t`; machines with thousands of CPUs parse the same way.
//! Ids are capped at the kernel's own limits and collected in a bitset
//! while parsing, so no file, however many or overlapping its ranges, can
//! expand to more than the cap.

use std::fmt;

use serde::Serialize;

use crate::error::{quote, ParseError};

/// A sorted set of CPU or node ids without duplicates.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(transparent)]
pub struct IdList(Vec<u32>);

/// CPU ids at or above this are refused. The kernel's NR_CPUS tops out at
/// 8,192 today (x86 MAXSMP); 65,536 leaves room for growth while keeping the
/// expansion of any list, however many ranges it holds, to one 8 KiB bitset.
pub const MAX_CPU_IDS: u32 = 1 << 16;

/// Node ids at or above this are refused: MAX_NUMNODES is 1 << NODES_SHIFT,
/// and NODES_SHIFT is at most 10 on every architecture Linux supports.
pub const MAX_NODE_IDS: u32 = 1 << 10;

/// The largest id any list may hold (kept for callers of the old cap).
pub const MAX_ID: u32 = MAX_CPU_IDS - 1;

/// A hex mask has at most this many 32-bit words: enough for every CPU id
/// below [`MAX_CPU_IDS`].
pub const MAX_MASK_WORDS: usize = (MAX_CPU_IDS / 32) as usize;

/// More comma-separated parts than ids there can be means the list repeats
/// itself; the kernel never writes that, and refusing it keeps a hostile
/// 16 MiB file of `0-65535,0-65535,…` from costing seconds of CPU.
const MAX_LIST_PARTS: usize = MAX_CPU_IDS as usize;

/// Ids seen while parsing, one bit each, so overlapping or repeated ranges
/// cost nothing extra and the whole parse is bounded by the id cap. The
/// words grow to the highest id set, never past `limit`: zeroing and
/// scanning all 1,024 words of the 65,536-id cap for every `0-3` was most
/// of a list's parse on hwloc's 128-CPU capture.
struct Bits {
    words: Vec<u64>,
    limit: u32,
}

impl Bits {
    fn new(limit: u32) -> Self {
        Bits {
            words: Vec::new(),
            limit,
        }
    }

    /// Sets `first..=last`, a word at a time; both are below `limit`.
    fn set_range(&mut self, first: u32, last: u32) {
        debug_assert!(first <= last && last < self.limit);
        let (first, last) = (first as usize, last as usize);
        if self.words.len() <= last / 64 {
            self.words.resize(last / 64 + 1, 0);
        }
        for word in first / 64..=last / 64 {
            let low = if word == first / 64 { first % 64 } else { 0 };
            let high = if word == last / 64 { last % 64 } else { 63 };
            let mask = (u64::MAX >> (63 - high)) & (u64::MAX << low);
            self.words[word] |= mask;
        }
    }

    fn into_list(self) -> IdList {
        let count: u32 = self.words.iter().map(|w| w.count_ones()).sum();
        let mut ids = Vec::with_capacity(count as usize);
        for (index, &word) in self.words.iter().enumerate() {
            let mut rest = word;
            while rest != 0 {
                let bit = rest.trailing_zeros();
                ids.push(index as u32 * 64 + bit);
                rest &= rest - 1;
            }
        }
        debug_assert!(ids.last().is_none_or(|id| *id < self.limit));
        IdList(ids)
    }
}

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

    /// Parses a CPU list such as `0-3,8,10-11` (ids below [`MAX_CPU_IDS`]).
    /// Whitespace around the list (the trailing newline of a sysfs file) is
    /// ignored; an empty list is valid and empty.
    pub fn parse(text: &str) -> Result<Self, ParseError> {
        Self::parse_below(text, MAX_CPU_IDS, "CPU", Steps::Refused)
    }

    /// Parses a node list such as `node/online` or `Mems_allowed_list`,
    /// whose ids are below [`MAX_NODE_IDS`].
    pub fn parse_nodes(text: &str) -> Result<Self, ParseError> {
        Self::parse_below(text, MAX_NODE_IDS, "node", Steps::Refused)
    }

    /// Parses a CPU list a person typed: numactl's `0-3,8`, and also the
    /// strided `a-b:step` that [`to_human`](Self::to_human) prints (and
    /// taskset takes), so any list numasleuth shows can be pasted back.
    /// Kernel files never hold steps, so [`parse`](Self::parse) keeps
    /// refusing them there.
    pub fn parse_input(text: &str) -> Result<Self, ParseError> {
        Self::parse_below(text, MAX_CPU_IDS, "CPU", Steps::Allowed)
    }

    /// [`parse_input`](Self::parse_input) for node ids.
    pub fn parse_nodes_input(text: &str) -> Result<Self, ParseError> {
        Self::parse_below(text, MAX_NODE_IDS, "node", Steps::Allowed)
    }

    fn parse_below(text: &str, limit: u32, what: &str, steps: Steps) -> Result<Self, ParseError> {
        let text = text.trim();
        let mut bits = Bits::new(limit);
        if text.is_empty() {
            return Ok(IdList::default());
        }
        // Ids a strided part sets one at a time; capped so `0-65535:2`
        // repeated across a long list cannot cost billions of steps.
        let mut stepped_ids: u64 = 0;
        for (index, part) in text.split(',').enumerate() {
            if index == MAX_LIST_PARTS {
                return Err(ParseError::new(format!(
                    "more than {MAX_LIST_PARTS} entries in a {what} list"
                )));
            }
            let part = part.trim();
            let (range, step) = match (part.split_once(':'), steps) {
                (Some((range, step)), Steps::Allowed) => (range, parse_step(step, part, limit)?),
                _ => (part, 1),
            };
            let (first, last) = match range.split_once('-') {
                Some((a, b)) => (parse_id(a, part, limit, what)?, parse_id(b, part, limit, what)?),
                None if step == 1 => {
                    let id = parse_id(range, part, limit, what)?;
                    (id, id)
                }
                None => {
                    return Err(ParseError::new(format!(
                        "`{}` has a step but no range (write a-b:step, e.g. 0-30:2)",
                        quote(part)
                    )))
                }
            };
            if first > last {
                return Err(ParseError::new(format!("range `{}` runs backwards", quote(part))));
            }
            if step == 1 {
                bits.set_range(first, last);
                continue;
            }
            stepped_ids += u64::from((last - first) / step + 1);
            if stepped_ids > MAX_STEPPED_IDS {
                return Err(ParseError::new(format!(
                    "the strided ranges of this {what} list name more than {MAX_STEPPED_IDS} ids"
                )));
            }
            for id in (first..=last).step_by(step as usize) {
                bits.set_range(id, id);
            }
        }
        Ok(bits.into_list())
    }

    /// Parses a kernel bitmap such as `00000000,0000000f`: comma-separated
    /// 32-bit hex words, most significant first, at most
    /// [`MAX_MASK_WORDS`] of them.
    pub fn parse_mask(text: &str) -> Result<Self, ParseError> {
        let text = text.trim();
        if text.is_empty() {
            return Err(ParseError::new("empty CPU mask"));
        }
        let mut bits = Bits::new(MAX_CPU_IDS);
        // From the right, so each word's index is known without collecting
        // an unbounded list of words first.
        for (index_from_right, word) in text.rsplit(',').enumerate() {
            if index_from_right == MAX_MASK_WORDS {
                return Err(ParseError::new(format!(
                    "CPU mask has more than {MAX_MASK_WORDS} words (CPU ids up to {MAX_ID})"
                )));
            }
            let word = word.trim().trim_start_matches("0x");
            let value = u32::from_str_radix(word, 16)
                .map_err(|_| ParseError::new(format!("`{}` is not a 32-bit hex mask word", quote(word))))?;
            let base = index_from_right as u32 * 32;
            for bit in (0..32).filter(|bit| value & (1 << bit) != 0) {
                bits.set_range(base + bit, base + bit);
            }
        }
        Ok(bits.into_list())
    }
}

/// Whether a list may hold `a-b:step` parts.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Steps {
    Refused,
    Allowed,
}

/// Ids all the strided parts of one list may name together, counting
/// repeats: four times the widest CPU list, far beyond any real one.
const MAX_STEPPED_IDS: u64 = 4 * MAX_CPU_IDS as u64;

fn parse_step(text: &str, part: &str, limit: u32) -> Result<u32, ParseError> {
    let refused = || {
        ParseError::new(format!(
            "`{}` has a bad step (write a-b:step with a step from 1 to {}, e.g. 0-30:2)",
            quote(part),
            limit - 1
        ))
    };
    let text = text.trim();
    if text.is_empty() || !text.bytes().all(|b| b.is_ascii_digit()) {
        return Err(refused());
    }
    match text.parse::<u32>() {
        Ok(step) if (1..limit).contains(&step) => Ok(step),
        _ => Err(refused()),
    }
}

fn parse_id(text: &str, part: &str, limit: u32, what: &str) -> Result<u32, ParseError> {
    let text = text.trim();
    let id: u64 = text.parse().map_err(|_| {
        ParseError::new(format!(
            "`{}` is not a {what} list entry (expected N, N-M or N-M:step)",
            quote(part)
        ))
    })?;
    match u32::try_from(id) {
        Ok(id) if id < limit => Ok(id),
        _ => Err(ParseError::new(format!(
            "{what} id {} in `{}` is not below the kernel's limit of {limit}",
            quote(text),
            quote(part)
        ))),
    }
}

impl FromIterator<u32> for IdList {
    fn from_iter<T: IntoIterator<Item = u32>>(iter: T) -> Self {
        IdList::new(iter.into_iter().collect())
    }
}

/// Compact numactl form: consecutive runs collapse to `a-b`.
impl IdList {
    /// The list as people read it: runs as `a-b`, and a run of three or
    /// more ids with a constant step above 1 as `a-b:step` (util-linux and
    /// taskset's form), so an interleaved `0,2,4,…,30` is `0-30:2`. Only for
    /// text meant for people: kernel files take the plain form
    /// ([`Display`](fmt::Display)), which has no steps.
    pub fn to_human(&self) -> String {
        let ids = &self.0;
        let mut parts: Vec<String> = Vec::new();
        let mut i = 0;
        while i < ids.len() {
            let start = ids[i];
            // The longest run with step 1 from here.
            let mut end = i;
            while end + 1 < ids.len() && ids[end + 1] == ids[end] + 1 {
                end += 1;
            }
            if end > i {
                parts.push(format!("{start}-{}", ids[end]));
                i = end + 1;
                continue;
            }
            // Otherwise the longest run with the step to the next id.
            if i + 2 < ids.len() {
                let step = ids[i + 1] - start;
                let mut end = i + 1;
                while end + 1 < ids.len() && ids[end + 1] - ids[end] == step {
                    end += 1;
                }
                if end >= i + 2 {
                    parts.push(format!("{start}-{}:{step}", ids[end]));
                    i = end + 1;
                    continue;
                }
            }
            parts.push(start.to_string());
            i += 1;
        }
        parts.join(",")
    }
}

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
    fn human_lists_compress_steps() {
        let list = |ids: Vec<u32>| IdList::new(ids).to_human();
        assert_eq!(list((0..=30).step_by(2).collect()), "0-30:2");
        assert_eq!(list(vec![0, 1, 2, 3, 8]), "0-3,8");
        assert_eq!(list(vec![0, 1, 4, 5]), "0-1,4-5");
        assert_eq!(list(vec![1, 3]), "1,3");
        assert_eq!(list(vec![0, 4, 8, 9, 10]), "0-8:4,9-10");
        assert_eq!(list(vec![]), "");
        assert_eq!(list(vec![7]), "7");
    }

    /// `a-b:step` expanded, as util-linux reads it.
    fn expand_human(text: &str) -> Vec<u32> {
        let mut ids = Vec::new();
        for part in text.split(',').filter(|p| !p.is_empty()) {
            let (range, step) = part.split_once(':').map_or((part, 1), |(r, s)| (r, s.parse().unwrap()));
            let (a, b) = range.split_once('-').map_or((range, range), |(a, b)| (a, b));
            ids.extend((a.parse::<u32>().unwrap()..=b.parse().unwrap()).step_by(step));
        }
        ids
    }

    proptest! {
        #[test]
        fn human_lists_name_exactly_the_ids(ids in proptest::collection::btree_set(0u32..200, 0..60)) {
            let list = IdList::new(ids.iter().copied().collect());
            prop_assert_eq!(expand_human(&list.to_human()), list.ids().to_vec());
        }
    }

    proptest! {
        /// Whatever numasleuth prints for people, a person can paste back.
        #[test]
        fn human_lists_parse_back(ids in proptest::collection::btree_set(0u32..5000, 0..120)) {
            let list = IdList::new(ids.iter().copied().collect());
            prop_assert_eq!(IdList::parse_input(&list.to_human()).unwrap(), list.clone());
            prop_assert_eq!(IdList::parse_input(&list.to_string()).unwrap(), list);
        }

        #[test]
        fn input_never_panics(text in "[0-9:,-]{0,40}") {
            let _ = IdList::parse_input(&text);
            let _ = IdList::parse_nodes_input(&text);
        }
    }

    #[test]
    fn strided_input() {
        let ids = |text: &str| IdList::parse_input(text).map(|l| l.ids().to_vec());
        assert_eq!(ids("0-30:2").unwrap(), (0..=30).step_by(2).collect::<Vec<_>>());
        assert_eq!(ids("0-3,8").unwrap(), vec![0, 1, 2, 3, 8]);
        assert_eq!(ids("1-9:4,2").unwrap(), vec![1, 2, 5, 9]);
        assert_eq!(ids("0-3:1").unwrap(), vec![0, 1, 2, 3]);
        assert_eq!(ids("0-8:100").unwrap(), vec![0]);
        for bad in [
            "0-30:0",
            "0-30:",
            "4:2",
            "0-30:2:2",
            "0-30:-1",
            "0-30:x",
            "30-0:2",
            "0-65536:2",
        ] {
            let err = IdList::parse_input(bad).unwrap_err();
            assert!(!err.0.contains('\n'), "{bad}: {err}");
        }
        assert!(IdList::parse_nodes_input("0-1024:2")
            .unwrap_err()
            .0
            .contains("node id 1024"));
        // Kernel files keep the strict form.
        assert!(IdList::parse("0-30:2").is_err());
        let repeated = ["0-65535:2"; 9].join(",");
        let err = IdList::parse_input(&repeated).unwrap_err();
        assert!(err.0.contains("more than 262144 ids"), "{err}");
    }

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
        assert!(IdList::parse("-1").is_err());
    }

    #[test]
    fn masks_are_most_significant_word_first() {
        // node0/cpumap of a 64-CPU machine with CPUs 0-3 and 32.
        let list = IdList::parse_mask("00000001,0000000f\n").unwrap();
        assert_eq!(list.ids(), &[0, 1, 2, 3, 32]);
        assert!(IdList::parse_mask("xyz").is_err());
    }

    #[test]
    fn ids_are_capped_at_the_kernels_limits() {
        assert_eq!(IdList::parse("65535").unwrap().ids(), &[65535]);
        let err = IdList::parse("0-65536").unwrap_err();
        assert!(err.0.contains("not below the kernel's limit of 65536"), "{err}");
        assert_eq!(IdList::parse_nodes("0-1023").unwrap().len(), 1024);
        let err = IdList::parse_nodes("1024").unwrap_err();
        assert!(err.0.contains("node id 1024"), "{err}");
        assert!(IdList::parse("18446744073709551617").is_err());
    }

    #[test]
    fn many_overlapping_ranges_cost_one_bitset() {
        // A 20 KB shared_cpu_list that repeats the widest range: without
        // dedup-as-you-go this was billions of ids.
        let text = vec!["0-65535"; 2500].join(",");
        let list = IdList::parse(&text).unwrap();
        assert_eq!(list.len(), 65536);
        let too_many = vec!["1"; MAX_LIST_PARTS + 1].join(",");
        let err = IdList::parse(&too_many).unwrap_err();
        assert!(err.0.contains("more than 65536 entries"), "{err}");
    }

    #[test]
    fn masks_are_capped_in_words() {
        let widest = vec!["ffffffff"; MAX_MASK_WORDS].join(",");
        assert_eq!(IdList::parse_mask(&widest).unwrap().len(), MAX_CPU_IDS as usize);
        let wider = vec!["0"; MAX_MASK_WORDS + 1].join(",");
        let err = IdList::parse_mask(&wider).unwrap_err();
        assert!(err.0.contains("more than 2048 words"), "{err}");
        assert!(IdList::parse_mask("1ffffffff").is_err());
    }

    #[test]
    fn errors_quote_input_safely() {
        let err = IdList::parse("3-1\x1b[2J").unwrap_err();
        assert!(!err.0.contains('\x1b'), "{err:?}");
        let err = IdList::parse(&format!("x{}", "9".repeat(5000))).unwrap_err();
        assert!(err.0.len() < 500, "{}", err.0.len());
    }

    proptest! {
        #[test]
        fn matches_a_plain_expansion(ranges in proptest::collection::vec((0u32..300, 0u32..70), 0..20)) {
            let text = ranges.iter().map(|(a, n)| format!("{a}-{}", a + n)).collect::<Vec<_>>().join(",");
            let expected = IdList::new(ranges.iter().flat_map(|(a, n)| *a..=a + n).collect());
            prop_assert_eq!(IdList::parse(&text).unwrap(), expected);
        }

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
        let text = vec!["0-65535"; 400].join(",");
        let list = IdList::parse(&text).unwrap();
        assert_eq!(list.len(), 65_536);
        // Before the fix the vector held every copy: 400 × 65536 slots.
        assert!(list.0.capacity() <= 2 * list.len(), "capacity {}", list.0.capacity());
        let overlapping = IdList::parse("8-10,0-3,2-9,3,12").unwrap();
        assert_eq!(overlapping.ids(), &[0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 12]);
    }
}
