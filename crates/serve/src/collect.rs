//! What one scrape reads. Cheap files (zoneinfo, each node's meminfo and
//! numastat, /proc/vmstat, read by `gather::memory_sample`) are read on
//! every scrape; the doctor checks,
//! the IRQ audit and `--pid` numa_maps walks are refreshed at most every
//! `--interval` and served from a cache between scrapes. Nothing here reads
//! /proc/slabinfo or walks every process; who else opens it is counted by
//! `lock_opens`.
//!
//! A `--pid` process's threads are placed at every refresh; a thread found
//! on another node than at the last refresh counts one node move, so the
//! counter is a lower bound (moves and returns between two refreshes are
//! not seen), enough for an alert on threads that keep hopping.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Instant;

use crate::http::Format;
use numasleuth_analyze::doctor::diagnose;
use numasleuth_analyze::irq::audit;
use numasleuth_analyze::memwatch::machine_counters;
use numasleuth_analyze::migrations::refresh::moves_between;
use numasleuth_kernel::gather::read_topology;
use numasleuth_kernel::gather::{memory_sample, MemoryParts, MemorySample};
use numasleuth_kernel::Root;
use numasleuth_model::process::ProcessModel;
use numasleuth_model::stop::Stop;
use numasleuth_model::Topology;
use numasleuth_report::openmetrics::{BuildInfo, Exposition, NodeMetrics, ProcessMetrics, ReclaimMetrics, Watermark};

/// Reads a `--pid` process's memory model: the application layer's
/// (`numasleuth_app::process`, which places its ELF objects too), or a
/// test's stand-in.
pub type ProcessReader = dyn Fn(&Root, u32, &Topology) -> Result<ProcessModel, numasleuth_kernel::procfs::process::ProcessError>
    + Send
    + Sync;

/// The part refreshed every `--interval`.
#[derive(Debug, Clone, Default)]
struct Cached {
    irqs: Vec<(u32, String, bool)>,
    findings: Vec<(String, String)>,
    processes: Vec<ProcessMetrics>,
    errors: Vec<(String, u64)>,
    refreshed: Option<Instant>,
}

/// Per `--pid` process: where each thread ran at the last refresh
/// (tid to CPU), and the node moves counted since `serve` started.
type Placements = HashMap<u32, (HashMap<u32, u32>, u64)>;

pub struct Collector {
    root: Root,
    pids: Vec<u32>,
    build: BuildInfo,
    process: std::sync::Arc<ProcessReader>,
    /// `None` for a tree that does not record it: watermarks, counted in
    /// pages, then have no byte series rather than a guessed one.
    base_page_bytes: Option<u64>,
    cache: Mutex<Cached>,
    placements: Mutex<Placements>,
    /// Opens of lock-taking kernel files, where a cheap method counts
    /// them; `None` when not asked for.
    lock_opens: Option<crate::lock_opens::Status>,
}

impl Collector {
    pub fn new(root: Root, pids: Vec<u32>, build: BuildInfo, process: std::sync::Arc<ProcessReader>) -> Self {
        let base_page_bytes = numasleuth_kernel::pages::base_page_bytes(&root);
        Collector {
            root,
            pids,
            build,
            process,
            base_page_bytes,
            cache: Mutex::new(Cached::default()),
            placements: Mutex::new(Placements::new()),
            lock_opens: None,
        }
    }

    /// Also counts opens of lock-taking kernel files on `cpus` (see
    /// `lock_opens`), until `stop` is requested.
    pub fn with_lock_opens(mut self, cpus: Result<Vec<u32>, crate::lock_opens::CpusUnknown>, stop: &Stop) -> Self {
        self.lock_opens = Some(crate::lock_opens::LockOpens::start(&self.root, cpus, stop));
        self
    }

    /// What `serve` says about that metric, when it was asked for.
    pub fn lock_opens_line(&self) -> Option<String> {
        self.lock_opens.as_ref().map(crate::lock_opens::LockOpens::describe)
    }

    /// Re-runs the expensive parts. Called by one thread every interval;
    /// scrapes meanwhile see the previous result.
    pub fn refresh(&self) {
        let mut fresh = Cached::default();
        // What the topology read could not use is left out, as everywhere.
        match read_topology(&self.root) {
            Ok(readings) => {
                let (topology, _) = Topology::build_degraded(&readings);
                let host = numasleuth_kernel::gather::read_host(&self.root, &readings);
                let mut diagnosis = diagnose(&topology, &host);
                diagnosis.rank();
                fresh.findings = diagnosis
                    .findings
                    .iter()
                    .map(|f| (f.id.to_string(), f.severity.as_str().to_string()))
                    .collect();
                for device in audit(&topology, &host) {
                    for row in device.irqs.iter().filter(|r| r.error.is_none()) {
                        fresh.irqs.push((row.irq, device.name.clone(), row.off_node));
                    }
                }
                fresh.processes = self.processes(&topology, &mut fresh.errors);
            }
            Err(_) => fresh.errors.push(("topology".into(), 1)),
        }
        fresh.refreshed = Some(Instant::now());
        *self.cache.lock().unwrap_or_else(|e| e.into_inner()) = fresh;
    }

    fn processes(&self, topology: &Topology, errors: &mut Vec<(String, u64)>) -> Vec<ProcessMetrics> {
        let mut out = Vec::new();
        let cpu_node = topology.cpu_nodes();
        let mut placements = self.placements.lock().unwrap_or_else(|e| e.into_inner());
        for &pid in &self.pids {
            // A process that exited or cannot be read drops out of the
            // exposition and counts as a collect error, never a failure.
            let Ok(model) = (self.process)(&self.root, pid, topology) else {
                errors.push((format!("pid {pid}"), 1));
                continue;
            };
            let total = model.total_bytes();
            let remote_ratio = model
                .remote_bytes()
                .filter(|_| total > 0)
                .map(|remote| remote as f64 / total as f64);
            let now: Vec<(u32, u32)> = model.threads.iter().filter_map(|t| Some((t.tid, t.cpu?))).collect();
            let (last, node_moves) = placements.entry(pid).or_default();
            *node_moves = node_moves.saturating_add(moves_between(last, &now, &cpu_node).1);
            *last = now.into_iter().collect();
            out.push(ProcessMetrics {
                pid,
                comm: model.comm.clone(),
                bytes_by_node: model.bytes_by_node.iter().map(|(n, b)| (*n, *b)).collect(),
                remote_ratio,
                thread_node_moves: Some(*node_moves),
            });
        }
        out
    }

    /// One scrape: the cheap files now, the cached part as last refreshed.
    pub fn scrape(&self) -> Exposition {
        let began = Instant::now();
        let mut e = Exposition {
            build: self.build.clone(),
            ..Exposition::default()
        };
        // One reading of the memory signals, as memwatch and top take it;
        // what could not be read is a collect error, and the rest is served.
        let reading = memory_sample(&self.root, MemoryParts::EXPORT);
        if let Some(page) = self.base_page_bytes {
            e.watermarks = reading
                .zones
                .iter()
                .filter(|z| z.managed_pages > 0)
                .map(|z| Watermark {
                    node: z.node,
                    zone: z.name.clone(),
                    min_bytes: z.min_pages.saturating_mul(page),
                    low_bytes: z.low_pages.saturating_mul(page),
                    high_bytes: z.high_pages.saturating_mul(page),
                })
                .collect();
        }
        e.nodes = reading.nodes().into_iter().map(|n| node_metrics(&reading, n)).collect();
        e.reclaim = reading.vmstat.as_ref().map(|vmstat| {
            let m = machine_counters(vmstat);
            ReclaimMetrics {
                scan_kswapd: m.pgscan_kswapd,
                scan_direct: m.pgscan_direct,
                steal_kswapd: m.pgsteal_kswapd,
                steal_direct: m.pgsteal_direct,
                allocstall: m.allocstall,
                oom_kill: m.oom_kill,
            }
        });
        let mut errors: Vec<(String, u64)> = reading.unread.into_iter().map(|(part, _)| (part, 1)).collect();
        let cached = self.cache.lock().unwrap_or_else(|e| e.into_inner()).clone();
        e.irqs = cached.irqs;
        e.findings = cached.findings;
        e.processes = cached.processes;
        e.refresh_age_seconds = cached.refreshed.map(|t| t.elapsed().as_secs_f64());
        e.lock_file_opens = self
            .lock_opens
            .as_ref()
            .and_then(|l| l.as_ref().ok())
            .map(|l| l.snapshot());
        errors.extend(cached.errors);
        e.collect_errors = errors;
        e.scrape_duration_seconds = began.elapsed().as_secs_f64();
        e
    }

    /// The exposition in `format`, with its content type.
    pub fn render(&self, format: Format) -> (String, &'static str) {
        use numasleuth_report::{openmetrics, prometheus_text};
        let exposition = self.scrape();
        match format {
            Format::OpenMetrics => (openmetrics::encode_text(&exposition), openmetrics::CONTENT_TYPE),
            Format::PrometheusText => (prometheus_text::encode_text(&exposition), prometheus_text::CONTENT_TYPE),
        }
    }
}

/// One node's figures from the reading; what was not read is absent.
fn node_metrics(reading: &MemorySample, node: u32) -> NodeMetrics {
    let info = reading.node_meminfo.get(&node);
    let numastat = reading.numastat.get(&node);
    let counter = |name: &str| numastat.and_then(|c| c.get(name).copied());
    NodeMetrics {
        node,
        free_bytes: info.and_then(|i| i.free_bytes()),
        total_bytes: info.and_then(|i| i.total_bytes()),
        numa_hit: counter("numa_hit"),
        numa_miss: counter("numa_miss"),
        numa_foreign: counter("numa_foreign"),
    }
}
