//! `serve` and `--textfile`: the exporter's metrics as OpenMetrics text,
//! encoded by the `prometheus-client` crate. The collector fills an
//! [`Exposition`] with plain numbers; this module only names and encodes
//! them, so the metric names live in one place and tests can pin them.

use std::sync::atomic::AtomicU64;

use prometheus_client::encoding::text::encode;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::info::Info;
use prometheus_client::registry::Registry;

use crate::openmetrics_family::{Labels, SortedFamily};

/// Content type of [`encode_text`]'s output.
pub const CONTENT_TYPE: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";

/// Every metric name the exporter can emit, as Prometheus stores them
/// (counters with `_total`). The dashboard test checks its PromQL
/// against this list.
pub const METRIC_NAMES: &[&str] = &[
    "numasleuth_build_info",
    "numasleuth_node_memory_free_bytes",
    "numasleuth_node_memory_total_bytes",
    "numasleuth_node_watermark_bytes",
    "numasleuth_node_numa_hit_total",
    "numasleuth_node_numa_miss_total",
    "numasleuth_node_numa_foreign_total",
    "numasleuth_reclaim_scan_total",
    "numasleuth_reclaim_steal_total",
    "numasleuth_allocstall_total",
    "numasleuth_oom_kill_total",
    "numasleuth_irq_off_node",
    "numasleuth_finding",
    "numasleuth_process_memory_bytes",
    "numasleuth_process_remote_ratio",
    "numasleuth_process_thread_node_moves_total",
    "numasleuth_scrape_duration_seconds",
    "numasleuth_collect_errors",
    "numasleuth_refresh_age_seconds",
    "numasleuth_lock_file_opens_total",
];

#[derive(Debug, Clone, Default, PartialEq)]
pub struct NodeMetrics {
    pub node: u32,
    pub free_bytes: Option<u64>,
    pub total_bytes: Option<u64>,
    pub numa_hit: Option<u64>,
    pub numa_miss: Option<u64>,
    pub numa_foreign: Option<u64>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Watermark {
    pub node: u32,
    pub zone: String,
    pub min_bytes: u64,
    pub low_bytes: u64,
    pub high_bytes: u64,
}

#[derive(Debug, Clone, PartialEq)]
pub struct ProcessMetrics {
    pub pid: u32,
    pub comm: String,
    pub bytes_by_node: Vec<(u32, u64)>,
    pub remote_ratio: Option<f64>,
    /// Threads found on another node than at the previous refresh, summed
    /// since the exporter started: a lower bound of node moves.
    pub thread_node_moves: Option<u64>,
}

/// Machine-wide /proc/vmstat counters.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ReclaimMetrics {
    pub scan_kswapd: u64,
    pub scan_direct: u64,
    pub steal_kswapd: u64,
    pub steal_direct: u64,
    pub allocstall: u64,
    pub oom_kill: Option<u64>,
}

/// Which numasleuth answers: `numasleuth_build_info{version,commit}`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct BuildInfo {
    pub version: String,
    /// The git commit built from; empty for a build from a source archive.
    pub commit: String,
}

/// One scrape's numbers.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Exposition {
    pub build: BuildInfo,
    pub nodes: Vec<NodeMetrics>,
    pub watermarks: Vec<Watermark>,
    pub reclaim: Option<ReclaimMetrics>,
    /// `(irq, device, off_node)`.
    pub irqs: Vec<(u32, String, bool)>,
    /// `(finding id, severity)` of each active doctor finding.
    pub findings: Vec<(String, String)>,
    pub processes: Vec<ProcessMetrics>,
    /// Sources that could not be read this scrape, with a count each.
    pub collect_errors: Vec<(String, u64)>,
    /// Age of the cached doctor/IRQ/process part.
    pub refresh_age_seconds: Option<f64>,
    pub scrape_duration_seconds: f64,
    /// `(file, comm, opens)` of lock-taking kernel files since the
    /// exporter started; `None` where no cheap method could watch them.
    pub lock_file_opens: Option<Vec<(String, String, u64)>>,
}

type GaugeFamily = SortedFamily<Gauge>;
type FloatFamily = SortedFamily<Gauge<f64, AtomicU64>>;
type CounterFamily = SortedFamily<Counter>;

/// Label values may come from the system (a device's name, a process's
/// comm); controls and bidi characters in them are written escaped
/// (`\x1b`, by `safe_text`), so `curl /metrics` or `cat numasleuth.prom`
/// shows them inert. A newline is left to the encoder, which writes `\n`
/// and escapes backslashes and quotes, as OpenMetrics requires.
fn labels(pairs: &[(&str, String)]) -> Labels {
    pairs
        .iter()
        .map(|(k, v)| {
            (
                (*k).to_string(),
                numasleuth_parse::safe_text::for_terminal(v).into_owned(),
            )
        })
        .collect()
}

/// A gauge's value; the kernel's counters fit i64 for centuries, and a
/// corrupt one is clamped rather than wrapped negative.
fn as_i64(value: u64) -> i64 {
    i64::try_from(value).unwrap_or(i64::MAX)
}

fn node_metrics(registry: &mut Registry, e: &Exposition) {
    let mut free = GaugeFamily::default();
    let mut total = GaugeFamily::default();
    let (mut hit, mut miss, mut foreign) = (
        CounterFamily::default(),
        CounterFamily::default(),
        CounterFamily::default(),
    );
    for n in &e.nodes {
        let node = labels(&[("node", n.node.to_string())]);
        for (family, value) in [(&mut free, n.free_bytes), (&mut total, n.total_bytes)] {
            if let Some(v) = value {
                family.get_or_create(&node).set(as_i64(v));
            }
        }
        let counters = [
            (&mut hit, n.numa_hit),
            (&mut miss, n.numa_miss),
            (&mut foreign, n.numa_foreign),
        ];
        for (family, value) in counters {
            if let Some(v) = value {
                family.get_or_create(&node).inc_by(v);
            }
        }
    }
    registry.register(
        "numasleuth_node_memory_free_bytes",
        "Free memory of the node (nodeN/meminfo MemFree)",
        free,
    );
    registry.register(
        "numasleuth_node_memory_total_bytes",
        "Memory of the node (nodeN/meminfo MemTotal)",
        total,
    );
    registry.register(
        "numasleuth_node_numa_hit",
        "Allocations meant for and served by this node (numastat)",
        hit,
    );
    registry.register(
        "numasleuth_node_numa_miss",
        "Allocations served here though meant for another node",
        miss,
    );
    registry.register(
        "numasleuth_node_numa_foreign",
        "Allocations meant for this node served elsewhere",
        foreign,
    );
    let mut marks = GaugeFamily::default();
    for w in &e.watermarks {
        for (level, bytes) in [("min", w.min_bytes), ("low", w.low_bytes), ("high", w.high_bytes)] {
            let l = labels(&[
                ("node", w.node.to_string()),
                ("zone", w.zone.clone()),
                ("level", level.into()),
            ]);
            marks.get_or_create(&l).set(as_i64(bytes));
        }
    }
    registry.register(
        "numasleuth_node_watermark_bytes",
        "Zone watermark (/proc/zoneinfo)",
        marks,
    );
}

fn reclaim_metrics(registry: &mut Registry, r: &ReclaimMetrics) {
    let (mut scan, mut steal) = (CounterFamily::default(), CounterFamily::default());
    for (kind, scanned, stolen) in [
        ("kswapd", r.scan_kswapd, r.steal_kswapd),
        ("direct", r.scan_direct, r.steal_direct),
    ] {
        scan.get_or_create(&labels(&[("kind", kind.into())])).inc_by(scanned);
        steal.get_or_create(&labels(&[("kind", kind.into())])).inc_by(stolen);
    }
    registry.register(
        "numasleuth_reclaim_scan",
        "Pages scanned by reclaim, machine-wide (/proc/vmstat)",
        scan,
    );
    registry.register(
        "numasleuth_reclaim_steal",
        "Pages reclaimed, machine-wide (/proc/vmstat)",
        steal,
    );
    let stalls = Counter::<u64>::default();
    stalls.inc_by(r.allocstall);
    registry.register(
        "numasleuth_allocstall",
        "Allocations that entered direct reclaim, machine-wide",
        stalls,
    );
    if let Some(kills) = r.oom_kill {
        let oom = Counter::<u64>::default();
        oom.inc_by(kills);
        registry.register(
            "numasleuth_oom_kill",
            "OOM kills, machine-wide (/proc/vmstat oom_kill)",
            oom,
        );
    }
}

fn cached_metrics(registry: &mut Registry, e: &Exposition) {
    let mut irq = GaugeFamily::default();
    for (number, device, off_node) in &e.irqs {
        let l = labels(&[("irq", number.to_string()), ("device", device.clone())]);
        irq.get_or_create(&l).set(i64::from(*off_node));
    }
    registry.register(
        "numasleuth_irq_off_node",
        "1 when the IRQ may run off its device's node",
        irq,
    );
    let mut findings = GaugeFamily::default();
    for (id, severity) in &e.findings {
        findings
            .get_or_create(&labels(&[("id", id.clone()), ("severity", severity.clone())]))
            .inc();
    }
    registry.register("numasleuth_finding", "Active doctor findings (1 each)", findings);
    let (mut memory, mut ratio) = (GaugeFamily::default(), FloatFamily::default());
    let mut moves = CounterFamily::default();
    for p in &e.processes {
        for (node, bytes) in &p.bytes_by_node {
            let l = labels(&[
                ("pid", p.pid.to_string()),
                ("comm", p.comm.clone()),
                ("node", node.to_string()),
            ]);
            memory.get_or_create(&l).set(as_i64(*bytes));
        }
        let process = labels(&[("pid", p.pid.to_string()), ("comm", p.comm.clone())]);
        if let Some(r) = p.remote_ratio {
            ratio.get_or_create(&process).set(r);
        }
        if let Some(n) = p.thread_node_moves {
            moves.get_or_create(&process).inc_by(n);
        }
    }
    registry.register(
        "numasleuth_process_memory_bytes",
        "Resident memory of a --pid process per node",
        memory,
    );
    registry.register(
        "numasleuth_process_remote_ratio",
        "Share of a --pid process's memory off its threads' nodes",
        ratio,
    );
    registry.register(
        "numasleuth_process_thread_node_moves",
        "Threads of a --pid process found on another node than at the previous refresh (a lower bound of node \
         moves)",
        moves,
    );
    if let Some(age) = e.refresh_age_seconds {
        let g = Gauge::<f64, AtomicU64>::default();
        g.set(age);
        registry.register(
            "numasleuth_refresh_age_seconds",
            "Age of the cached doctor, IRQ and process figures",
            g,
        );
    }
}

fn lock_file_metrics(registry: &mut Registry, opens: &[(String, String, u64)]) {
    let mut family = CounterFamily::default();
    for (file, comm, count) in opens {
        family
            .get_or_create(&labels(&[("file", file.clone()), ("comm", comm.clone())]))
            .inc_by(*count);
    }
    registry.register(
        "numasleuth_lock_file_opens",
        "Opens of kernel files whose read takes an allocator lock (/proc/slabinfo, pagetypeinfo, others' smaps)",
        family,
    );
}

/// The whole exposition as OpenMetrics text, ending in `# EOF`.
pub fn encode_text(e: &Exposition) -> String {
    let mut registry = Registry::default();
    // An info metric: OpenMetrics names its sample `numasleuth_build_info`.
    registry.register(
        "numasleuth_build",
        "The numasleuth that answers: its version and git commit",
        Info::new(vec![
            ("version".to_string(), e.build.version.clone()),
            ("commit".to_string(), e.build.commit.clone()),
        ]),
    );
    node_metrics(&mut registry, e);
    if let Some(opens) = &e.lock_file_opens {
        lock_file_metrics(&mut registry, opens);
    }
    if let Some(r) = &e.reclaim {
        reclaim_metrics(&mut registry, r);
    }
    cached_metrics(&mut registry, e);
    let mut errors = GaugeFamily::default();
    for (source, count) in &e.collect_errors {
        errors
            .get_or_create(&labels(&[("source", source.clone())]))
            .set(as_i64(*count));
    }
    registry.register(
        "numasleuth_collect_errors",
        "Sources that could not be read this scrape",
        errors,
    );
    let duration = Gauge::<f64, AtomicU64>::default();
    duration.set(e.scrape_duration_seconds);
    registry.register(
        "numasleuth_scrape_duration_seconds",
        "Time this scrape took to collect",
        duration,
    );
    let mut text = String::new();
    // Writing into a String cannot fail; an error here would be a bug in
    // the encoder, and an empty exposition is the safe answer.
    if encode(&mut text, &registry).is_err() {
        text = "# EOF\n".to_string();
    }
    text
}

#[cfg(test)]
#[path = "openmetrics_tests.rs"]
mod tests;
