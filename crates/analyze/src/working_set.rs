//! How much memory a DRAM figure must touch: at least [`CACHE_FACTOR`]×
//! the largest cache the measuring CPUs share, so the figure is memory and
//! not cache.
//!
//! Fixed sizes were wrong on real servers: "8× a 32 MiB L3" is 256 MiB,
//! which a 300 MiB L3 holds whole, and AMD parts with stacked cache have
//! over 1 GiB of L3 per socket. So the size comes from the machine's own
//! caches (sysfs, through the model), is bounded by the free memory of the
//! node that holds it (keeping headroom above its high watermark, so the
//! measurement never pushes the node into reclaim), and every result says
//! how it was chosen. `--quick` takes fewer samples, never a smaller set;
//! an explicit `--size` is honoured, with a warning when it is below the
//! rule.

use numasleuth_model::units::bytes;
use numasleuth_model::CacheDomain;
use serde::Serialize;

/// The working set is at least this many times the cache. A random chase
/// over 4× a cache still hits it about one load in four at worst; the
/// self-check at twice the size ([`crate::latency_check`]) says when that
/// still moves the figure.
pub const CACHE_FACTOR: u64 = 4;
/// The factor for streaming (bandwidth) buffers. A sequential sweep is
/// what adaptive (thrash-resistant) L3 replacement keeps a share of, where
/// a random chase is not: on a 16-vCPU Xeon with a 300 MiB L3 (2026-11-26,
/// bench/RESULTS.md), 16 threads read 137 GB/s over 4× (1.2 GiB), 109 over
/// 2 GiB and 93 over 4 GiB, while the chase was flat from 32 MiB on.
pub const STREAM_FACTOR: u64 = 8;
/// Sizes are whole multiples of this (a transparent huge page), per thread.
pub const ROUND_BYTES: u64 = 2 << 20;
/// Used when no cache size is known (no `cache/index*/size` in sysfs): the
/// rule's size for a 256 MiB last-level cache.
pub const FALLBACK_BYTES: u64 = 1 << 30;
/// Share of a node's free memory above its high watermark that a working
/// set may take; the rest is headroom for everything else on the node.
pub const FREE_SHARE: f64 = 0.9;

/// The cache a working set was sized from, as the JSON carries it:
/// `{"cache": "L3", "bytes": …, "cpus": "0-15", "factor": 4}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SizedFrom {
    /// `L3`: the level, or levels' caches, whose capacity the measuring
    /// CPUs can fill.
    pub cache: String,
    /// The capacity of every cache of that level the measuring CPUs reach
    /// (one L3, or the sum of several when threads span several).
    pub bytes: u64,
    /// The CPUs those caches serve, as people read lists.
    pub cpus: String,
    pub factor: u64,
    /// How many caches of that level `bytes` adds up.
    pub count: u32,
}

impl SizedFrom {
    /// "the 300 MiB L3 shared by CPUs 0-15".
    /// "the 300 MiB L3 shared by CPUs 0-15", or with several caches "the
    /// 16 MiB of 8 L2 caches serving CPUs 0-7".
    pub fn describe(&self) -> String {
        if self.count > 1 {
            format!(
                "the {} of {} {} caches serving CPUs {}",
                bytes(self.bytes),
                self.count,
                self.cache,
                self.cpus
            )
        } else if self.cpus.parse::<u32>().is_ok() {
            format!("the {} {} of CPU {}", bytes(self.bytes), self.cache, self.cpus)
        } else {
            format!("the {} {} shared by CPUs {}", bytes(self.bytes), self.cache, self.cpus)
        }
    }
}

/// What the explicit-size warning says after the size and its cache.
const RULE_ASKS: &str = " (the rule asks ";

/// `warnings` without repeats, and with the explicit-size warnings of a
/// chase set and a stream set (`mem`'s two matrices: same size, same
/// cache, two rules) said once, with both rules.
pub fn merge_warnings(warnings: &mut Vec<String>) {
    let mut seen = std::collections::HashSet::new();
    warnings.retain(|w| seen.insert(w.clone()));
    let mut i = 0;
    while i < warnings.len() {
        let Some(at) = warnings[i].find(RULE_ASKS) else {
            i += 1;
            continue;
        };
        let head = warnings[i][..at].to_string();
        let twin = (i + 1..warnings.len())
            .find(|&j| warnings[j].starts_with(&head) && warnings[j][head.len()..].starts_with(RULE_ASKS));
        if let Some(j) = twin {
            let rule = |w: &str| w[head.len() + RULE_ASKS.len()..].trim_end_matches(')').to_string();
            let (mut chase, mut stream) = (rule(&warnings[i]), rule(&warnings[j]));
            if stream.starts_with(&format!("{CACHE_FACTOR}×")) {
                std::mem::swap(&mut chase, &mut stream);
            }
            let head = head.replace("the figure may", "the figures may");
            warnings[i] = format!("{head}{RULE_ASKS}{chase}, for latency and {stream}, for bandwidth)");
            warnings.remove(j);
        }
        i += 1;
    }
}

/// The free memory of a node that will hold a working set.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NodeRoom {
    pub node: u32,
    pub free_bytes: u64,
    /// The node's high watermark over its ordinary zones (/proc/zoneinfo),
    /// when it could be read.
    pub high_watermark_bytes: Option<u64>,
    /// The system's base page size (4 KiB, or 16 or 64 KiB on many Arm
    /// kernels): a buffer smaller than a huge page is whole base pages.
    pub base_page_bytes: u64,
}

impl NodeRoom {
    /// What a working set may take: [`FREE_SHARE`] of the memory above the
    /// high watermark (of all free memory when the watermark is unknown).
    pub fn usable_bytes(&self) -> u64 {
        let above = self.free_bytes.saturating_sub(self.high_watermark_bytes.unwrap_or(0));
        (above as f64 * FREE_SHARE) as u64
    }
}

/// What decided a working set's size; serialised as `rule`, `size`,
/// `free-memory`, `fallback` or `self-check`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum ChosenBy {
    /// The factor times the largest cache.
    Rule,
    /// An explicit `--size`.
    Size,
    /// The rule did not fit in free memory.
    FreeMemory,
    /// No cache size known: [`FALLBACK_BYTES`].
    Fallback,
    /// Raised from the rule's size until the latency curve flattened
    /// ([`crate::flat_search`]).
    SelfCheck,
}

/// How one working set was chosen.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct WorkingSet {
    /// All the threads' buffers together.
    pub working_set_bytes: u64,
    pub per_thread_bytes: u64,
    pub threads: u64,
    /// `None` when no cache size is known.
    pub sized_from: Option<SizedFrom>,
    /// What the rule asks for: the factor times the cache, or
    /// [`FALLBACK_BYTES`], per thread rounded up.
    pub rule_bytes: u64,
    pub chosen_by: ChosenBy,
    /// What a person should know about the choice (below the rule, bounded
    /// by free memory, no cache known). Also in the document's warnings.
    pub notes: Vec<String>,
}

/// The largest cache capacity any one group of CPUs can fill. A group is
/// the CPUs that run at once (one chasing CPU; a node's bandwidth
/// threads). Within a group, each data or unified level counts every one of
/// its caches that serves a CPU of the group, and the level that adds up
/// to most wins (the higher level on a tie).
pub fn largest_cache(caches: &[CacheDomain], groups: &[&[u32]]) -> Option<SizedFrom> {
    let mut best: Option<(u64, u32, SizedFrom)> = None;
    for group in groups {
        let mut levels: std::collections::BTreeMap<u32, (u64, u32, Vec<u32>)> = Default::default();
        for cache in caches.iter().filter(|c| c.kind.holds_data()) {
            let Some(size) = cache.size_bytes.filter(|s| *s > 0) else {
                continue;
            };
            if !group.iter().any(|cpu| cache.cpus.contains(*cpu)) {
                continue;
            }
            let level = levels.entry(cache.level).or_default();
            level.0 = level.0.saturating_add(size);
            level.1 += 1;
            level.2.extend(cache.cpus.iter());
        }
        for (level, (total, count, mut cpus)) in levels {
            if best.as_ref().is_some_and(|(b, l, _)| (total, level) <= (*b, *l)) {
                continue;
            }
            cpus.sort_unstable();
            cpus.dedup();
            let from = SizedFrom {
                cache: format!("L{level}"),
                bytes: total,
                cpus: numasleuth_parse::human_list(&cpus),
                factor: CACHE_FACTOR,
                count,
            };
            best = Some((total, level, from));
        }
    }
    best.map(|(_, _, from)| from)
}

/// [`largest_cache`] for streaming buffers: the same cache, with
/// [`STREAM_FACTOR`].
pub fn largest_cache_streamed(caches: &[CacheDomain], groups: &[&[u32]]) -> Option<SizedFrom> {
    largest_cache(caches, groups).map(|from| SizedFrom {
        factor: STREAM_FACTOR,
        ..from
    })
}

/// `total` split over `threads`, each part rounded up to [`ROUND_BYTES`].
fn per_thread_rounded_up(total: u64, threads: u64) -> u64 {
    total
        .div_ceil(threads)
        .div_ceil(ROUND_BYTES)
        .saturating_mul(ROUND_BYTES)
}

/// The working set for `threads` threads together, sized from `cache`,
/// bounded by the tightest of `rooms` (the nodes that will hold it), or
/// `explicit_bytes` when the user gave `--size`.
pub fn choose(cache: Option<SizedFrom>, rooms: &[NodeRoom], threads: u64, explicit_bytes: Option<u64>) -> WorkingSet {
    let threads = threads.max(1);
    let wanted = cache
        .as_ref()
        .map_or(FALLBACK_BYTES, |c| c.bytes.saturating_mul(c.factor));
    let rule_per_thread = per_thread_rounded_up(wanted, threads);
    let rule_bytes = rule_per_thread.saturating_mul(threads);
    let mut set = WorkingSet {
        working_set_bytes: rule_bytes,
        per_thread_bytes: rule_per_thread,
        threads,
        sized_from: cache,
        rule_bytes,
        chosen_by: ChosenBy::Rule,
        notes: Vec::new(),
    };
    if let Some(explicit) = explicit_bytes {
        set.chosen_by = ChosenBy::Size;
        set.per_thread_bytes = (explicit / threads).max(1);
        set.working_set_bytes = set.per_thread_bytes * threads;
        if let Some(from) = set.sized_from.as_ref().filter(|_| explicit < rule_bytes) {
            set.notes.push(format!(
                "{} is {} {}: the figure may include cache hits (the rule asks {}× it, {})",
                bytes(explicit),
                times(explicit, from.bytes),
                from.describe(),
                from.factor,
                bytes(rule_bytes)
            ));
        }
        return set;
    }
    if set.sized_from.is_none() {
        set.chosen_by = ChosenBy::Fallback;
        set.notes.push(format!(
            "no cache sizes in sysfs (/sys/devices/system/cpu/cpu*/cache/index*/size): the working set is {}, \
             and nothing here can tell whether that is beyond the caches",
            bytes(rule_bytes)
        ));
    }
    if let Some(room) = rooms.iter().min_by_key(|r| r.usable_bytes()) {
        let fits_per_thread = fit_per_thread(room.usable_bytes(), threads, room.base_page_bytes);
        if fits_per_thread < rule_per_thread {
            bound_by_free_memory(&mut set, room, fits_per_thread);
        }
    }
    set
}

/// The most each of `threads` buffers may take of `usable` bytes: whole
/// huge pages, or whole base pages (at least one) when less than one
/// huge page each is left.
fn fit_per_thread(usable: u64, threads: u64, base_page_bytes: u64) -> u64 {
    let page = base_page_bytes.max(1);
    let each = usable / threads;
    if each >= ROUND_BYTES {
        each / ROUND_BYTES * ROUND_BYTES
    } else {
        (each / page * page).max(page)
    }
}

/// Shrinks `set` to `per_thread` bytes a thread, which is what `room`
/// holds, and says so.
fn bound_by_free_memory(set: &mut WorkingSet, room: &NodeRoom, per_thread: u64) {
    set.chosen_by = ChosenBy::FreeMemory;
    set.per_thread_bytes = per_thread;
    set.working_set_bytes = per_thread.saturating_mul(set.threads);
    let watermark = room.high_watermark_bytes.map_or_else(
        || "its high watermark is unknown (/proc/zoneinfo unread)".to_string(),
        |high| {
            format!(
                "{} of it above its high watermark",
                bytes(room.free_bytes.saturating_sub(high))
            )
        },
    );
    let against = set.sized_from.as_ref().map_or_else(
        || "the fallback size".to_string(),
        |from| format!("{} {}", times(set.working_set_bytes, from.bytes), from.describe()),
    );
    set.notes.push(format!(
        "node {} has {} free, {watermark}: the working set is {}, {against}, where the rule asks {}× ({}); the \
         figure may include cache hits. Free memory on node {} (page cache: `sync; echo 1 > /proc/sys/vm/drop_caches`) \
         and measure again",
        room.node,
        bytes(room.free_bytes),
        bytes(set.working_set_bytes),
        set.sized_from.as_ref().map_or(CACHE_FACTOR, |f| f.factor),
        bytes(set.rule_bytes),
        room.node
    ));
}

/// "3.4×" of `part` over `whole`: one decimal, two below 1 ("0.03×").
fn times(part: u64, whole: u64) -> String {
    if whole == 0 {
        return "a multiple of".into();
    }
    let ratio = part as f64 / whole as f64;
    if ratio >= 1.0 {
        format!("{ratio:.1}×")
    } else {
        format!("{ratio:.2}×")
    }
}

#[cfg(test)]
#[path = "working_set_tests.rs"]
mod tests;
