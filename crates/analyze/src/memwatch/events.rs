//! The one detector of memory events, for every command that samples the
//! node memory signals. It gives two typed lists between two samples:
//!
//! - [`EventTracker::events`], what changed (memwatch prints these): a node
//!   crossed a watermark or recovered, reclaim or an OOM kill happened;
//! - [`EventTracker::conditions`], what held during the interval, said
//!   every sample it holds (probe-latency lines spikes up against these: a
//!   spike seconds after a node fell under its low watermark is still
//!   explained by it).
//!
//! A node that hovers a few pages around its low watermark must not flap
//! between "fell below" and "back above": the tracker keeps each node's
//! state and declares recovery only above the `high` watermark (where
//! kswapd itself stops) or after [`RECOVERY_SAMPLES`] samples in a row
//! above `low`.
//!
//! The kernel starts serving a node's allocations elsewhere only once the
//! node is under `low`, so the sample that sees the crossing often sees no
//! fallback yet: the recovery says how much fell back over the whole
//! episode.

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;

use super::{NodeSample, Sample};

/// Samples in a row above `low` that count as a recovery even below `high`.
pub const RECOVERY_SAMPLES: u32 = 5;

/// A kswapd episode smaller than this is routine background reclaim.
const KSWAPD_EPISODE_MIN_BYTES: u64 = 4 << 20;

/// What an event says; serialized as its kebab-case name (`below-low`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum EventKind {
    // Changes.
    BelowLow,
    BelowMin,
    Recovered,
    DirectReclaim,
    NodeReclaim,
    KswapdEpisode,
    OomKill,
    // Conditions, said every sample they hold.
    UnderLow,
    UnderMin,
    /// The node took allocations meant for another (numa_miss grew).
    NumaFallback,
    AllocStalls,
    DirectScan,
    KswapdScan,
}

impl EventKind {
    /// The name JSON carries.
    pub fn name(self) -> &'static str {
        match self {
            EventKind::BelowLow => "below-low",
            EventKind::BelowMin => "below-min",
            EventKind::Recovered => "recovered",
            EventKind::DirectReclaim => "direct-reclaim",
            EventKind::NodeReclaim => "node-reclaim",
            EventKind::KswapdEpisode => "kswapd-episode",
            EventKind::OomKill => "oom-kill",
            EventKind::UnderLow => "under-low",
            EventKind::UnderMin => "under-min",
            EventKind::NumaFallback => "numa-fallback",
            EventKind::AllocStalls => "alloc-stalls",
            EventKind::DirectScan => "direct-scan",
            EventKind::KswapdScan => "kswapd-scan",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Event {
    pub t_s: f64,
    /// `None` for machine-wide events (reclaim and OOM counters are not
    /// per node in /proc/vmstat).
    pub node: Option<u32>,
    pub kind: EventKind,
    pub message: String,
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
struct NodeState {
    /// 0 fine, 1 below low, 2 below min (and not yet recovered).
    level: u8,
    above_low_run: u32,
    /// The node's numa_foreign in the sample before it first fell: what
    /// the episode's fallback is counted from.
    foreign_at_fall: Option<u64>,
    /// Nodes whose numa_miss grew while this one was low.
    receivers: BTreeSet<u32>,
}

#[derive(Debug, Clone, Copy)]
struct Episode {
    start_t_s: f64,
    steal_at_start: u64,
}

/// Carries state between samples (per-node hysteresis, kswapd episodes).
#[derive(Debug, Clone)]
pub struct EventTracker {
    base_page_bytes: u64,
    nodes: BTreeMap<u32, NodeState>,
    kswapd: Option<Episode>,
}

fn raw_level(n: &NodeSample) -> u8 {
    if n.free_pages <= n.min_pages {
        2
    } else if n.free_pages <= n.low_pages {
        1
    } else {
        0
    }
}

fn mib(bytes: u64) -> String {
    let mib = bytes as f64 / (1u64 << 20) as f64;
    if mib >= 10.0 {
        format!("{mib:.0} MiB")
    } else {
        format!("{mib:.1} MiB")
    }
}

impl EventTracker {
    pub fn new(base_page_bytes: u64) -> Self {
        EventTracker {
            base_page_bytes: base_page_bytes.max(1),
            nodes: BTreeMap::new(),
            kswapd: None,
        }
    }

    fn amount(&self, pages: u64) -> String {
        let bytes = pages.saturating_mul(self.base_page_bytes);
        if bytes >= 1 << 20 {
            format!("{pages} pages, {}", mib(bytes))
        } else {
            format!("{pages} pages, {} KiB", bytes >> 10)
        }
    }

    /// What changed between two consecutive samples that a person should
    /// hear about.
    pub fn events(&mut self, previous: &Sample, current: &Sample) -> Vec<Event> {
        let mut out = Vec::new();
        for node in &current.nodes {
            if let Some(event) = self.node_event(previous, current, node) {
                out.push(event);
            }
        }
        out.extend(self.reclaim_events(previous, current));
        out
    }

    fn node_event(&mut self, previous: &Sample, current: &Sample, node: &NodeSample) -> Option<Event> {
        let raw = raw_level(node);
        let mut state = self.nodes.remove(&node.node).unwrap_or_default();
        let event = self.node_change(&mut state, previous, current, node, raw);
        self.nodes.insert(node.node, state);
        event
    }

    fn node_change(
        &self,
        state: &mut NodeState,
        previous: &Sample,
        current: &Sample,
        node: &NodeSample,
        raw: u8,
    ) -> Option<Event> {
        let was = state.level;
        if raw == 0 && was == 0 {
            return None;
        }
        let receivers = fallback_receivers(previous, current, node.node);
        if raw > was {
            let foreign_before = previous
                .nodes
                .iter()
                .find(|p| p.node == node.node)
                .and_then(|b| b.numa_foreign);
            if was == 0 {
                state.foreign_at_fall = foreign_before;
                state.receivers.clear();
            }
            state.level = raw;
            state.above_low_run = 0;
            let event = self.fell_event(current, node, raw, foreign_before, &receivers);
            state.receivers.extend(receivers);
            return Some(event);
        }
        state.receivers.extend(receivers);
        if raw > 0 {
            state.above_low_run = 0;
            return None;
        }
        state.above_low_run += 1;
        let above_high = node.free_pages > node.high_pages;
        if !above_high && state.above_low_run < RECOVERY_SAMPLES {
            return None;
        }
        let why = if above_high {
            "above its high watermark".to_string()
        } else {
            format!("above its low watermark for {RECOVERY_SAMPLES} samples")
        };
        let mut message = format!(
            "node {} recovered at t={:.1} s: {} free, {why}",
            node.node, current.t_s, node.free_pages
        );
        if let Some(fell_back) = self.fell_back(node, state.foreign_at_fall, &state.receivers) {
            message.push_str(&format!("; while it was low, {fell_back}"));
        }
        *state = NodeState::default();
        Some(Event {
            t_s: current.t_s,
            node: Some(node.node),
            kind: EventKind::Recovered,
            message,
        })
    }

    /// "N pages, X MiB of its allocations fell back to node M", when
    /// `node`'s numa_foreign grew since `foreign_before` and another node
    /// took allocations meanwhile.
    fn fell_back(&self, node: &NodeSample, foreign_before: Option<u64>, receivers: &BTreeSet<u32>) -> Option<String> {
        let foreign = node
            .numa_foreign
            .zip(foreign_before)
            .map_or(0, |(now, then)| now.saturating_sub(then));
        (foreign > 0 && !receivers.is_empty()).then(|| {
            format!(
                "{} of its allocations fell back to {}",
                self.amount(foreign),
                node_list(receivers)
            )
        })
    }

    fn fell_event(
        &self,
        current: &Sample,
        node: &NodeSample,
        level: u8,
        foreign_before: Option<u64>,
        receivers: &BTreeSet<u32>,
    ) -> Event {
        let (kind, mark, pages) = if level == 2 {
            (EventKind::BelowMin, "min", node.min_pages)
        } else {
            (EventKind::BelowLow, "low", node.low_pages)
        };
        let mut message = format!(
            "node {} fell below its {mark} watermark at t={:.1} s ({} free, {mark} {pages})",
            node.node, current.t_s, node.free_pages
        );
        if let Some(fell_back) = self.fell_back(node, foreign_before, receivers) {
            message.push_str(&format!(", {fell_back}"));
        }
        Event {
            t_s: current.t_s,
            node: Some(node.node),
            kind,
            message,
        }
    }

    fn reclaim_events(&mut self, previous: &Sample, current: &Sample) -> Vec<Event> {
        let mut out = Vec::new();
        let (now, then) = (&current.machine, &previous.machine);
        let direct = now.pgscan_direct.saturating_sub(then.pgscan_direct);
        let stalls = now.allocstall.saturating_sub(then.allocstall);
        if stalls > 0 {
            out.push(self.machine_event(
                current,
                EventKind::DirectReclaim,
                format!(
                    "direct reclaim at t={:.1} s (machine-wide): {stalls} allocation stalls, {direct} pages scanned",
                    current.t_s
                ),
            ));
        } else if direct > 0 {
            // Without stalls, the scans came from node_reclaim() when
            // zone_reclaim_mode is set: the allocating node reclaimed its
            // own pages rather than spill to another node.
            let (kind, what) = match current.zone_reclaim_mode {
                Some(mode) if mode != 0 => (
                    EventKind::NodeReclaim,
                    format!("node-local reclaim (zone_reclaim_mode={mode})"),
                ),
                _ => (
                    EventKind::DirectReclaim,
                    "direct reclaim without allocation stalls".to_string(),
                ),
            };
            out.push(self.machine_event(
                current,
                kind,
                format!(
                    "{what} at t={:.1} s (machine-wide): {direct} pages scanned",
                    current.t_s
                ),
            ));
        }
        out.extend(self.kswapd_event(previous, current));
        let ooms = now.oom_kill.zip(then.oom_kill).map_or(0, |(a, b)| a.saturating_sub(b));
        if ooms > 0 {
            out.push(self.machine_event(
                current,
                EventKind::OomKill,
                format!(
                    "{ooms} OOM kill(s) between t={:.1} s and t={:.1} s",
                    previous.t_s, current.t_s
                ),
            ));
        }
        out
    }

    /// kswapd's reclaim from the first interval it stole pages to the first
    /// interval it stole none; reported when the episode ends.
    fn kswapd_event(&mut self, previous: &Sample, current: &Sample) -> Option<Event> {
        let (now, then) = (current.machine.pgsteal_kswapd, previous.machine.pgsteal_kswapd);
        match self.kswapd {
            None if now > then => {
                self.kswapd = Some(Episode {
                    start_t_s: previous.t_s,
                    steal_at_start: then,
                });
                None
            }
            Some(episode) if now <= then => {
                self.kswapd = None;
                let bytes = then
                    .saturating_sub(episode.steal_at_start)
                    .saturating_mul(self.base_page_bytes);
                (bytes >= KSWAPD_EPISODE_MIN_BYTES).then(|| {
                    let seconds = previous.t_s - episode.start_t_s;
                    self.machine_event(
                        current,
                        EventKind::KswapdEpisode,
                        format!(
                            "kswapd reclaimed {} in {seconds:.1} s (t={:.1} s to t={:.1} s, machine-wide)",
                            mib(bytes),
                            episode.start_t_s,
                            previous.t_s
                        ),
                    )
                })
            }
            _ => None,
        }
    }

    fn machine_event(&self, current: &Sample, kind: EventKind, message: String) -> Event {
        Event {
            t_s: current.t_s,
            node: None,
            kind,
            message,
        }
    }
}

/// What held between `previous` and `current`: a node under a watermark
/// (said every sample it stays there), NUMA fallback onto a node, and
/// reclaim activity. Stateless: counters that go backwards or vanish are
/// not events.
pub fn conditions(previous: &Sample, current: &Sample) -> Vec<Event> {
    let mut out = Vec::new();
    let mut say = |node: Option<u32>, kind: EventKind, message: String| {
        out.push(Event {
            t_s: current.t_s,
            node,
            kind,
            message,
        })
    };
    for node in &current.nodes {
        let under = match raw_level(node) {
            2 => Some((EventKind::UnderMin, "min")),
            1 => Some((EventKind::UnderLow, "low")),
            _ => None,
        };
        if let Some((kind, mark)) = under {
            let message = format!(
                "node {} below {mark} watermark ({} free pages)",
                node.node, node.free_pages
            );
            say(Some(node.node), kind, message);
        }
        let before = previous.nodes.iter().find(|p| p.node == node.node);
        if let Some(d) = grew(node.numa_miss, before.and_then(|b| b.numa_miss)) {
            let message = format!("node {}: {d} pages allocated here as fallback (numa_miss)", node.node);
            say(Some(node.node), EventKind::NumaFallback, message);
        }
    }
    let (now, then) = (&current.machine, &previous.machine);
    if let Some(d) = grew(Some(now.allocstall), Some(then.allocstall)) {
        say(
            None,
            EventKind::AllocStalls,
            format!("direct reclaim: {d} allocation stall(s)"),
        );
    }
    if let Some(d) = grew(Some(now.pgscan_direct), Some(then.pgscan_direct)) {
        say(None, EventKind::DirectScan, format!("direct reclaim scanned {d} pages"));
    }
    if let Some(d) = grew(Some(now.pgscan_kswapd), Some(then.pgscan_kswapd)) {
        say(None, EventKind::KswapdScan, format!("kswapd scanned {d} pages"));
    }
    out
}

/// How much a counter grew, if it did.
fn grew(now: Option<u64>, then: Option<u64>) -> Option<u64> {
    now?.checked_sub(then?).filter(|d| *d > 0)
}

/// Nodes whose numa_miss grew: they took allocations meant for another.
fn fallback_receivers(previous: &Sample, current: &Sample, except: u32) -> BTreeSet<u32> {
    current
        .nodes
        .iter()
        .filter(|n| n.node != except)
        .filter(|n| {
            let before = previous
                .nodes
                .iter()
                .find(|p| p.node == n.node)
                .and_then(|p| p.numa_miss);
            matches!((n.numa_miss, before), (Some(now), Some(then)) if now > then)
        })
        .map(|n| n.node)
        .collect()
}

/// `node 0` or `node 0, node 2`.
fn node_list(nodes: &BTreeSet<u32>) -> String {
    let named: Vec<String> = nodes.iter().map(|n| format!("node {n}")).collect();
    named.join(", ")
}
