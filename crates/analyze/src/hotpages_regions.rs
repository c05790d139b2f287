//! Where DAMON's regions start for one process, which decides what a short
//! window can find.
//!
//! DAMON checks one random page of each region per sample and splits and
//! merges regions only once per aggregation. Left to itself, its vaddr
//! operations start from three big regions over the whole address space,
//! and a program's static data is a sliver of one of them. Even started
//! from the mappings, one region for all of a program's `.data` and `.bss`
//! (69 pages in the incident's program) holds one hot global among cold
//! neighbours, sampled once in 69 samples: 3 s of DAMON did not find it.
//! So the regions start at the boundaries of the mappings and of the
//! program's writable sections, and the pages of those sections start as
//! regions of their own; DAMON merges the cold ones back by itself while a
//! hot page stays a region of its own.
//!
//! The kernel's part: the vaddr operations keep regions a user sets
//! (`damon_va_init` builds its own only for a target without any), and
//! every `update_us` fit them to the three big regions of the current
//! mappings (regions outside are dropped, the first and last are stretched
//! and holes between them filled), so a region inside a mapping survives.
//! DAMON's sysfs refuses regions that are out of order or overlap, and
//! splits regions at random only while there are fewer than half of
//! `max_nr_regions`: the count here stays within the caller's budget.

/// Mappings (other than the program's static data) of at most this many
/// pages start as one region per page.
pub const SPLIT_PAGES: u64 = 64;
/// Writable sections whose boundaries cut regions; a program has a dozen.
pub const MAX_SECTIONS: usize = 64;
/// User addresses end here on x86-64 with 4-level paging; `[vsyscall]`
/// lies above and is left out (DAMON's vaddr cannot sample it).
const USER_END: u64 = 1 << 47;

/// Initial regions for DAMON, sorted, disjoint, page-aligned and at most
/// `max` (at least one when any mapping is given):
/// - one per mapping (`start..end`, any order); past the budget the
///   neighbours with the smallest gap are joined first, so touching and
///   nearby mappings share a region and far ones do not;
/// - cut at the page-aligned boundaries of `static_data`, the program's
///   writable sections (`.data`, `.bss`, `.got`);
/// - the pages of `static_data` one region each, first; where the budget
///   does not hold every page, a section's pages are split evenly into as
///   many regions as it holds;
/// - then other mappings of at most [`SPLIT_PAGES`] pages, smallest first,
///   one region per page while the budget holds.
pub fn initial_regions(
    mappings: &[(u64, u64)],
    static_data: &[(u64, u64)],
    max: usize,
    page_bytes: u64,
) -> Vec<(u64, u64)> {
    let page = page_bytes.max(1);
    let max = max.max(1);
    let sections: Vec<(u64, u64)> = aligned(static_data, page).into_iter().take(MAX_SECTIONS).collect();
    // Both sides of a page two sections share are cut, so it starts as a
    // region of its own; too many cuts for the budget are none.
    let maps = merged(aligned(mappings, page));
    let mut cuts = boundaries(&sections, &maps);
    if cuts.len() >= max {
        cuts.clear();
    }
    let statics = merged(sections);
    let static_pages: u64 = statics.iter().map(|&(s, e)| (e - s) / page).sum();
    // The static data's pages are what the window must resolve: they get
    // up to half the budget before far mappings get regions of their own.
    let reserve = static_pages.min(max as u64 / 2) as usize;
    let base_max = max.saturating_sub(cuts.len() + reserve).max(1);
    let base = joined(&maps, base_max);
    let pieces = cut(&base, &cuts);
    let chunks = chunk_counts(&pieces, &statics, max, page);
    let mut out = Vec::with_capacity(chunks.iter().sum::<u64>() as usize);
    for (&(s, e), &n) in pieces.iter().zip(&chunks) {
        split_even(s, e, n, page, &mut out);
    }
    out
}

/// User-space ranges rounded out to whole pages, sorted.
fn aligned(ranges: &[(u64, u64)], page: u64) -> Vec<(u64, u64)> {
    let mut out: Vec<(u64, u64)> = ranges
        .iter()
        .filter(|&&(s, e)| s < e && e <= USER_END)
        .map(|&(s, e)| (s / page * page, e.div_ceil(page) * page))
        .collect();
    out.sort_unstable();
    out
}

/// Sorted ranges with overlapping ones merged; touching ones stay apart,
/// so the boundary between two mappings is kept.
fn merged(sorted: Vec<(u64, u64)>) -> Vec<(u64, u64)> {
    let mut out: Vec<(u64, u64)> = Vec::with_capacity(sorted.len());
    for (s, e) in sorted {
        match out.last_mut() {
            Some(last) if s < last.1 => last.1 = last.1.max(e),
            _ => out.push((s, e)),
        }
    }
    out
}

/// Every start and end of `spans` that lies inside one of `maps` (sorted,
/// disjoint), sorted and once each: those are the cuts to make.
fn boundaries(spans: &[(u64, u64)], maps: &[(u64, u64)]) -> Vec<u64> {
    let inside = |c: u64| {
        let i = maps.partition_point(|m| m.1 <= c);
        maps.get(i).is_some_and(|m| m.0 < c)
    };
    let mut cuts: Vec<u64> = spans.iter().flat_map(|&(s, e)| [s, e]).filter(|&c| inside(c)).collect();
    cuts.sort_unstable();
    cuts.dedup();
    cuts
}

/// `regions` (sorted, disjoint), at most `max`: the neighbours with the
/// smallest gaps between them are joined first.
fn joined(regions: &[(u64, u64)], max: usize) -> Vec<(u64, u64)> {
    if regions.len() <= max {
        return regions.to_vec();
    }
    // The gap below which neighbours are joined: the (len - max)-th
    // smallest gap.
    let mut gaps: Vec<u64> = regions.windows(2).map(|w| w[1].0 - w[0].1).collect();
    gaps.sort_unstable();
    let limit = gaps[regions.len() - max - 1];
    let mut budget = regions.len() - max;
    let mut out: Vec<(u64, u64)> = Vec::with_capacity(max);
    for &(s, e) in regions {
        match out.last_mut() {
            Some(last) if budget > 0 && s - last.1 <= limit => {
                last.1 = e;
                budget -= 1;
            }
            _ => out.push((s, e)),
        }
    }
    out
}

/// `regions` (sorted, disjoint) cut at every one of `cuts` (sorted) that
/// lies strictly inside one.
fn cut(regions: &[(u64, u64)], cuts: &[u64]) -> Vec<(u64, u64)> {
    let mut out = Vec::with_capacity(regions.len() + cuts.len());
    for &(s, e) in regions {
        let first = cuts.partition_point(|&c| c <= s);
        let mut from = s;
        for &c in cuts[first..].iter().take_while(|&&c| c < e) {
            out.push((from, c));
            from = c;
        }
        out.push((from, e));
    }
    out
}

/// How many regions each piece starts as, within `max` in all: the
/// program's static data first, then small mappings smallest first.
fn chunk_counts(pieces: &[(u64, u64)], statics: &[(u64, u64)], max: usize, page: u64) -> Vec<u64> {
    let pages = |i: usize| (pieces[i].1 - pieces[i].0) / page;
    let is_static = |i: usize| {
        let (s, e) = pieces[i];
        statics.iter().any(|&(ss, se)| ss < e && s < se)
    };
    let mut chunks = vec![1u64; pieces.len()];
    let mut spare = (max as u64).saturating_sub(pieces.len() as u64);
    for i in (0..pieces.len()).filter(|&i| is_static(i)) {
        let extra = (pages(i).saturating_sub(1)).min(spare);
        chunks[i] += extra;
        spare -= extra;
    }
    let mut small: Vec<usize> = (0..pieces.len())
        .filter(|&i| !is_static(i) && pages(i) > 1 && pages(i) <= SPLIT_PAGES)
        .collect();
    small.sort_by_key(|&i| (pages(i), pieces[i].0));
    for i in small {
        let extra = pages(i) - 1;
        if extra > spare {
            break;
        }
        chunks[i] += extra;
        spare -= extra;
    }
    chunks
}

/// `s..e` (whole pages) as `n` regions of whole pages, as equal as pages
/// allow, appended to `out`.
fn split_even(s: u64, e: u64, n: u64, page: u64, out: &mut Vec<(u64, u64)>) {
    let pages = (e - s) / page;
    let n = n.clamp(1, pages.max(1));
    let mut from = s;
    for k in 1..=n {
        let to = if k == n {
            e
        } else {
            s + (k as u128 * pages as u128 / n as u128) as u64 * page
        };
        out.push((from, to));
        from = to;
    }
}

#[cfg(test)]
#[path = "hotpages_regions_tests.rs"]
mod tests;
