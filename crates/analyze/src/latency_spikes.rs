//! `probe-latency`'s spikes: the timeline buckets whose worst corrected
//! latency is at least ten times the median, each lined up against the
//! memory signals seen around it. This is how the zone-reclaim incident was
//! solved: the stalls meant nothing until they were put next to a node
//! sitting under its low watermark and direct reclaim.

use serde::Serialize;

use crate::node_signals::SignalEvent;

/// A spike is a latency at least this many times the median.
pub const SPIKE_FACTOR: u64 = 10;
/// Spikes listed at most (the largest ones, then shown in time order).
pub const MAX_SPIKES: usize = 50;
/// Events listed per spike at most.
pub const MAX_EVENTS_PER_SPIKE: usize = 4;

/// One slice of the run's timeline; measured by `measure::probe_latency`.
pub use numasleuth_model::latency::Bucket;

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Spike {
    pub t_s: f64,
    pub latency_ns: u64,
    /// The highest percentile this latency reaches (`p99.9`), if any.
    pub percentile: Option<String>,
    pub coincident_events: Vec<String>,
    /// Opens of lock-taking kernel files just before it
    /// (`probe-latency --readers`; see `spike_readers`).
    pub readers: Vec<crate::spike_readers::SpikeRead>,
}

/// Events count as coinciding from `before_s` ahead of a spike's start
/// until `after_s` past its end (a sample reports what happened during the
/// interval before it, so `after_s` should be one sampling interval).
#[derive(Debug, Clone, Copy)]
pub struct Window {
    pub before_s: f64,
    pub after_s: f64,
}

/// Runs of adjacent buckets over the threshold make one spike (a stall
/// spans buckets); `percentiles` are `(label, ns)` in ascending order.
pub fn spikes(
    buckets: &[Bucket],
    median_ns: u64,
    percentiles: &[(String, u64)],
    events: &[SignalEvent],
    window: Window,
) -> Vec<Spike> {
    let threshold_ns = median_ns.max(1).saturating_mul(SPIKE_FACTOR);
    let mut found: Vec<(f64, u64)> = Vec::new();
    let mut previous_over = false;
    for bucket in buckets.iter().filter(|b| b.count > 0) {
        let over = bucket.max_corrected_ns >= threshold_ns;
        match found.last_mut() {
            Some(last) if over && previous_over && bucket.max_corrected_ns > last.1 => {
                *last = (bucket.max_at_s, bucket.max_corrected_ns);
            }
            _ if over && !previous_over => found.push((bucket.max_at_s, bucket.max_corrected_ns)),
            _ => {}
        }
        previous_over = over;
    }
    // The largest ones, shown in time order.
    found.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.total_cmp(&b.0)));
    found.truncate(MAX_SPIKES);
    found.sort_by(|a, b| a.0.total_cmp(&b.0));
    found
        .into_iter()
        .map(|(t_s, latency_ns)| Spike {
            t_s,
            latency_ns,
            percentile: percentiles
                .iter()
                .rev()
                .find(|(_, ns)| latency_ns >= *ns)
                .map(|(label, _)| label.clone()),
            coincident_events: coincident(t_s, latency_ns, events, window),
            readers: Vec::new(),
        })
        .collect()
}

/// The events in the window, nearest first, one per kind (a node sitting
/// under its watermark is reported every sample; the nearest says it).
fn coincident(t_s: f64, latency_ns: u64, events: &[SignalEvent], window: Window) -> Vec<String> {
    let end_s = t_s + latency_ns as f64 / 1e9;
    let mut near: Vec<&SignalEvent> = events
        .iter()
        .filter(|e| e.t_s >= t_s - window.before_s && e.t_s <= end_s + window.after_s)
        .collect();
    near.sort_by(|a, b| (a.t_s - t_s).abs().total_cmp(&(b.t_s - t_s).abs()));
    let mut kinds = std::collections::BTreeSet::new();
    near.into_iter()
        .filter(|e| kinds.insert(e.signal.kind()))
        .take(MAX_EVENTS_PER_SPIKE)
        .map(|e| {
            let dt_ms = (t_s - e.t_s) * 1e3;
            if dt_ms >= 0.0 {
                format!("{} ({dt_ms:.0} ms earlier)", e.signal)
            } else {
                format!("{} ({:.0} ms later)", e.signal, -dt_ms)
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::node_signals::{Signal, Watermark};

    fn bucket(start_s: f64, max_ns: u64) -> Bucket {
        Bucket {
            start_s,
            count: 10,
            max_corrected_ns: max_ns,
            max_uncorrected_ns: 1000,
            max_at_s: start_s + 0.001,
        }
    }

    fn labels() -> Vec<(String, u64)> {
        vec![("p99".into(), 5_000), ("p99.9".into(), 40_000_000)]
    }

    const WINDOW: Window = Window {
        before_s: 1.0,
        after_s: 0.2,
    };

    #[test]
    fn adjacent_buckets_over_ten_times_the_median_are_one_spike() {
        let buckets = [
            bucket(0.0, 2_000),
            bucket(0.01, 41_000_000),
            bucket(0.02, 30_000_000),
            bucket(0.03, 2_000),
            bucket(0.04, 19_999),
            bucket(0.05, 20_000),
        ];
        let got = spikes(&buckets, 2_000, &labels(), &[], WINDOW);
        assert_eq!(got.len(), 2, "{got:?}");
        assert_eq!((got[0].t_s, got[0].latency_ns), (0.011, 41_000_000));
        assert_eq!(got[0].percentile.as_deref(), Some("p99.9"));
        assert_eq!((got[1].latency_ns, got[1].percentile.as_deref()), (20_000, Some("p99")));
    }

    #[test]
    fn events_inside_the_window_are_attached_with_their_offset() {
        let at = |t_s: f64, signal: Signal| SignalEvent { t_s, signal };
        let low = |node, free_pages| Signal::BelowWatermark {
            node,
            mark: Watermark::Low,
            free_pages,
        };
        let events = [
            at(10.0, Signal::KswapdScan { pages: 1 }),
            at(12.297, Signal::DirectReclaimScan { pages: 64 }),
            at(12.5, low(1, 150)),
            at(13.0, Signal::AllocStalls { stalls: 1 }),
        ];
        let got = spikes(&[bucket(12.299, 41_000_000)], 1_000, &labels(), &events, WINDOW);
        assert_eq!(
            got[0].coincident_events,
            [
                "direct reclaim scanned 64 pages (3 ms earlier)",
                "node 1 below low watermark (150 free pages) (200 ms later)"
            ]
        );
    }

    #[test]
    fn repeated_events_are_said_once_the_nearest_one() {
        let at = |t_s: f64, signal: Signal| SignalEvent { t_s, signal };
        let mark = |node, mark, free_pages| Signal::BelowWatermark { node, mark, free_pages };
        let fallback = |node, pages| Signal::NumaFallback { node, pages };
        let events = [
            at(4.8, mark(1, Watermark::Low, 5612)),
            at(4.8, fallback(0, 3305)),
            at(5.0, mark(1, Watermark::Low, 5600)),
            at(5.0, fallback(0, 20)),
            at(5.0, mark(2, Watermark::Low, 7)),
            // Under min is another kind than under low, on the same node.
            at(4.9, mark(2, Watermark::Min, 3)),
        ];
        let got = spikes(&[bucket(4.999, 41_000_000)], 1_000, &[], &events, WINDOW);
        assert_eq!(
            got[0].coincident_events,
            [
                "node 1 below low watermark (5600 free pages) (0 ms earlier)",
                "node 0: 20 pages allocated here as fallback (numa_miss) (0 ms earlier)",
                "node 2 below low watermark (7 free pages) (0 ms earlier)",
                "node 2 below min watermark (3 free pages) (100 ms earlier)",
            ]
        );
    }

    #[test]
    fn flat_runs_empty_buckets_and_a_zero_median_make_no_false_spikes() {
        assert!(spikes(&[bucket(0.0, 9_000), bucket(0.1, 9_999)], 1_000, &labels(), &[], WINDOW).is_empty());
        let empty = Bucket {
            count: 0,
            max_corrected_ns: u64::MAX,
            ..Bucket::default()
        };
        assert!(spikes(&[empty], 0, &labels(), &[], WINDOW).is_empty());
        // A zero median counts as 1 ns, and the threshold cannot overflow.
        assert_eq!(spikes(&[bucket(0.0, 10)], 0, &[], &[], WINDOW).len(), 1);
        assert!(spikes(&[bucket(0.0, u64::MAX - 1)], u64::MAX, &[], &[], WINDOW).is_empty());
    }

    #[test]
    fn only_the_largest_spikes_are_kept() {
        let buckets: Vec<Bucket> = (0..200)
            .map(|i| bucket(i as f64, if i % 2 == 0 { 1_000_000 + i } else { 10 }))
            .collect();
        let got = spikes(&buckets, 10, &[], &[], WINDOW);
        assert_eq!(got.len(), MAX_SPIKES);
        assert!(got.windows(2).all(|w| w[0].t_s < w[1].t_s));
        assert_eq!(got[0].latency_ns, 1_000_100);
    }
}
