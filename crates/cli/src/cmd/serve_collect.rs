//! What one scrape reads. Cheap files (zoneinfo, each node's meminfo and
//! numastat, /proc/vmstat) are read on every scrape; the doctor checks,
//! the IRQ audit and `--pid` numa_maps walks are refreshed at most every
//! `--interval` and served from a cache between scrapes. Nothing here reads
//! /proc/slabinfo or walks every process; who else opens it is counted by
//! `serve_readers`.
//!
//! A `--pid` process's threads are placed at every refresh; a thread found
//! on another node than at the last refresh counts one node move, so the
//! counter is a lower bound (moves and returns between two refreshes are
//! not seen), enough for an alert on threads that keep hopping.

use std::collections::{BTreeSet, HashMap};
use std::sync::Mutex;
use std::time::Instant;

use numasleuth_analyze::doctor::diagnose;
use numasleuth_analyze::irq::audit;
use numasleuth_analyze::memwatch::machine_counters;
use numasleuth_analyze::migrations::refresh::moves_between;
use numasleuth_kernel::procfs::{meminfo, settings, zoneinfo};
use numasleuth_kernel::sysfs::node::{self, NODE_DIR};
use numasleuth_kernel::Root;
use numasleuth_report::openmetrics::{
    encode_text, BuildInfo, Exposition, NodeMetrics, ProcessMetrics, ReclaimMetrics, Watermark,
};

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
    /// `None` for a tree that does not record it: watermarks, counted in
    /// pages, then have no byte series rather than a guessed one.
    base_page_bytes: Option<u64>,
    cache: Mutex<Cached>,
    placements: Mutex<Placements>,
    /// Opens of lock-taking kernel files, where a cheap method counts
    /// them; `None` when not asked for.
    lock_opens: Option<super::serve_readers::Status>,
}

impl Collector {
    pub fn new(root: Root, pids: Vec<u32>) -> Self {
        let base_page_bytes = numasleuth_kernel::pages::base_page_bytes(&root);
        Collector {
            root,
            pids,
            base_page_bytes,
            cache: Mutex::new(Cached::default()),
            placements: Mutex::new(Placements::new()),
            lock_opens: None,
        }
    }

    /// Also counts opens of lock-taking kernel files (see `serve_readers`).
    pub fn with_lock_opens(mut self, wanted: bool) -> Self {
        self.lock_opens = wanted.then(|| super::serve_readers::LockOpens::start(&self.root));
        self
    }

    /// What `serve` says about that metric, when it was asked for.
    pub fn lock_opens_line(&self) -> Option<String> {
        self.lock_opens.as_ref().map(super::serve_readers::LockOpens::describe)
    }

    /// Re-runs the expensive parts. Called by one thread every interval;
    /// scrapes meanwhile see the previous result.
    pub fn refresh(&self) {
        let mut fresh = Cached::default();
        match super::read_degraded(&self.root) {
            Ok(read) => {
                let host = numasleuth_kernel::gather::read_host(&self.root, &read.readings);
                let mut diagnosis = diagnose(&read.topology, &host);
                diagnosis.rank();
                fresh.findings = diagnosis
                    .findings
                    .iter()
                    .map(|f| (f.id.to_string(), f.severity.as_str().to_string()))
                    .collect();
                for device in audit(&read.topology, &host) {
                    for row in device.irqs.iter().filter(|r| r.error.is_none()) {
                        fresh.irqs.push((row.irq, device.name.clone(), row.off_node));
                    }
                }
                fresh.processes = self.processes(&read.topology, &mut fresh.errors);
            }
            Err(_) => fresh.errors.push(("topology".into(), 1)),
        }
        fresh.refreshed = Some(Instant::now());
        *self.cache.lock().unwrap_or_else(|e| e.into_inner()) = fresh;
    }

    fn processes(&self, topology: &numasleuth_model::Topology, errors: &mut Vec<(String, u64)>) -> Vec<ProcessMetrics> {
        let mut out = Vec::new();
        let cpu_node = topology.cpu_nodes();
        let mut placements = self.placements.lock().unwrap_or_else(|e| e.into_inner());
        for &pid in &self.pids {
            // A process that exited or cannot be read drops out of the
            // exposition and counts as a collect error, never a failure.
            let Ok(model) = super::inspect::model(&self.root, pid, false, topology) else {
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
            build: BuildInfo {
                version: env!("CARGO_PKG_VERSION").to_string(),
                commit: env!("NUMASLEUTH_GIT_COMMIT").to_string(),
            },
            ..Exposition::default()
        };
        let mut errors = Vec::new();
        match zoneinfo::read(&self.root) {
            Ok(zones) => {
                let nodes: BTreeSet<u32> = zones.iter().map(|z| z.node).collect();
                if let Some(page) = self.base_page_bytes {
                    e.watermarks = zones
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
                e.nodes = nodes.iter().map(|&n| self.node(n, &mut errors)).collect();
            }
            Err(_) => errors.push(("zoneinfo".to_string(), 1)),
        }
        match settings::read_vmstat(&self.root) {
            Ok(vmstat) => {
                let m = machine_counters(&vmstat);
                e.reclaim = Some(ReclaimMetrics {
                    scan_kswapd: m.pgscan_kswapd,
                    scan_direct: m.pgscan_direct,
                    steal_kswapd: m.pgsteal_kswapd,
                    steal_direct: m.pgsteal_direct,
                    allocstall: m.allocstall,
                    oom_kill: m.oom_kill,
                });
            }
            Err(_) => errors.push(("vmstat".to_string(), 1)),
        }
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

    fn node(&self, node: u32, errors: &mut Vec<(String, u64)>) -> NodeMetrics {
        let mut m = NodeMetrics {
            node,
            ..NodeMetrics::default()
        };
        // A kernel built without NUMA has no node directory: everything is
        // node 0, and /proc/meminfo is its meminfo.
        let path = if node == 0 && !self.root.exists(NODE_DIR) {
            "proc/meminfo".to_string()
        } else {
            format!("{NODE_DIR}/node{node}/meminfo")
        };
        match meminfo::read(&self.root, &path) {
            Ok(info) => {
                m.free_bytes = info.free_bytes();
                m.total_bytes = info.total_bytes();
            }
            Err(_) => errors.push((format!("node{node}/meminfo"), 1)),
        }
        match node::read_counters(&self.root, [node], "numastat") {
            Ok(mut nodes) => {
                let counters = nodes.remove(&node).unwrap_or_default();
                m.numa_hit = counters.get("numa_hit").copied();
                m.numa_miss = counters.get("numa_miss").copied();
                m.numa_foreign = counters.get("numa_foreign").copied();
            }
            Err(_) => errors.push((format!("node{node}/numastat"), 1)),
        }
        m
    }

    /// The exposition as OpenMetrics text.
    pub fn render(&self) -> String {
        encode_text(&self.scrape())
    }
}
