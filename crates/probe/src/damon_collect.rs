//! The run: DAMON's regions read at intervals while the kdamond watches,
//! with the kdamond's own CPU time before and after, until the duration
//! ends, a stop is requested or the process exits.
//!
//! Why several snapshots and not one: DAMON starts from a few large
//! regions and splits them as it learns, and one aggregation is noisy;
//! `analyze::hotpages` averages the second half of the run. The number of
//! snapshots is capped, so memory stays bounded by `MAX_SNAPSHOTS ×
//! max_regions` regions however long the run.
//!
//! Also here, the read after the run: where a sample of a hot region's
//! pages lives.

use std::time::{Duration, Instant};

use numasleuth_kernel::pages::{self, PagesError, Residency};
use numasleuth_kernel::procfs::pagemap;
use numasleuth_kernel::procfs::process::read_process_stat;
use numasleuth_kernel::Root;
use numasleuth_model::hotpages::{DamonSnapshot, HotpagesRaw, PagePlacement};
use numasleuth_model::stop::{RunSpan, Stop};

use crate::damon::{DamonError, Session};

/// Most snapshots one run keeps.
pub const MAX_SNAPSHOTS: u64 = 64;
/// Shortest time between snapshots: each costs the kdamond a pass over its
/// regions and numasleuth four file reads per region.
pub const MIN_INTERVAL: Duration = Duration::from_millis(500);

/// Time between snapshots for a run of `duration`.
pub fn interval(duration: Duration) -> Duration {
    (duration / MAX_SNAPSHOTS as u32)
        .max(MIN_INTERVAL)
        .min(duration.max(MIN_INTERVAL))
}

fn cpu_ticks(root: &Root, pid: Option<u32>) -> Option<u64> {
    read_process_stat(root, pid?).ok()?.cpu_ticks
}

/// Clock ticks per second (`sysconf(_SC_CLK_TCK)`), for CPU times.
pub fn ticks_per_sec() -> u64 {
    // SAFETY: sysconf has no memory effects.
    let ticks = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    u64::try_from(ticks).unwrap_or(100)
}

/// Watches for `duration` (or until `stop`), taking a snapshot every
/// [`interval`] and one at the end. The session stays the caller's to stop.
pub fn collect(root: &Root, session: &mut Session, duration: Duration, stop: &Stop) -> Result<HotpagesRaw, DamonError> {
    let started = Instant::now();
    let cpu_before = cpu_ticks(root, session.kdamond_pid());
    let every = interval(duration);
    let mut snapshots = Vec::new();
    let mut ended_early = None;
    let mut next = started + every;
    let end = started + duration;
    let mut stopped_early = false;
    loop {
        let last = next >= end;
        if stop.sleep_until(next.min(end)) {
            stopped_early = true;
        }
        match session.snapshot() {
            Ok(regions) => snapshots.push(DamonSnapshot {
                at_ms: started.elapsed().as_millis() as u64,
                regions,
            }),
            Err(e @ DamonError::TargetExited { .. }) => {
                ended_early = Some(e.to_string());
                break;
            }
            Err(e) => return Err(e),
        }
        if last || stopped_early || snapshots.len() as u64 >= MAX_SNAPSHOTS {
            break;
        }
        next += every;
    }
    let cpu_after = cpu_ticks(root, session.kdamond_pid());
    Ok(HotpagesRaw {
        pid: session.pid(),
        attrs: session.attrs(),
        snapshots,
        span: RunSpan::new(started.elapsed(), Some(duration), stopped_early),
        kdamond_pid: session.kdamond_pid(),
        kdamond_cpu_ticks: cpu_before.zip(cpu_after),
        ticks_per_sec: ticks_per_sec(),
        ended_early,
    })
}

/// Where the pages at `addresses` of `pid` live, counted: move_pages for
/// the node, pagemap to tell a page between hinting faults from an
/// untouched one; `is_mapped` says whether an address lies in a mapping.
pub fn place_pages(
    root: &Root,
    pid: u32,
    addresses: &[u64],
    page_bytes: u64,
    is_mapped: impl Fn(u64) -> bool,
) -> Result<PagePlacement, PagesError> {
    let statuses = pages::query(pid, addresses)?;
    let entries = pagemap::read(root, pid, addresses, page_bytes).ok();
    let mut placement = PagePlacement {
        sampled_pages: addresses.len() as u64,
        ..PagePlacement::default()
    };
    for (i, status) in statuses.into_iter().enumerate() {
        let mapped = is_mapped(addresses[i]);
        match pages::residency(status, entries.as_ref().map(|e| e[i]), mapped) {
            Residency::Node(node) => *placement.pages_by_node.entry(node).or_default() += 1,
            Residency::HintingFault => placement.hinting_fault_pages += 1,
            _ => placement.other_pages += 1,
        }
    }
    Ok(placement)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn intervals_keep_snapshots_bounded() {
        assert_eq!(interval(Duration::from_secs(10)), MIN_INTERVAL);
        assert_eq!(interval(Duration::from_secs(3600)), Duration::from_secs(3600) / 64);
        // A run shorter than the minimum takes one snapshot, at its end.
        assert_eq!(interval(Duration::from_millis(200)), MIN_INTERVAL);
        for secs in [1u64, 10, 100, 3600] {
            let d = Duration::from_secs(secs);
            assert!(d.as_secs_f64() / interval(d).as_secs_f64() <= MAX_SNAPSHOTS as f64 + 1e-9);
        }
    }

    #[test]
    fn this_process_places_a_touched_page() {
        let root = Root::live();
        let pid = std::process::id();
        let page_bytes = pages::page_size_bytes();
        let page = vec![1u8; 4 * page_bytes as usize];
        // A whole page inside the buffer, touched above.
        let address = (page.as_ptr() as u64).next_multiple_of(page_bytes);
        let placed = place_pages(&root, pid, &[address], page_bytes, |_| true).unwrap();
        assert_eq!(placed.sampled_pages, 1);
        assert_eq!(placed.pages_by_node.values().sum::<u64>(), 1, "{placed:?}");
    }
}
