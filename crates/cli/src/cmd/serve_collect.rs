//! What one scrape reads. Cheap files (zoneinfo, each node's meminfo and
//! numastat, /proc/vmstat) are read on every scrape; the doctor checks,
//! the IRQ audit and `--pid` numa_maps walks are refreshed at most every
//! `--interval` and served from a cache between scrapes. Nothing here reads
//! /proc/slabinfo or walks every process.

use std::collections::BTreeSet;
use std::sync::Mutex;
use std::time::Instant;

use numasleuth_analyze::doctor::diagnose;
use numasleuth_analyze::irq::audit;
use numasleuth_analyze::memwatch::machine_counters;
use numasleuth_kernel::procfs::{meminfo, settings, zoneinfo};
use numasleuth_kernel::sysfs::node::{self, NODE_DIR};
use numasleuth_kernel::Root;
use numasleuth_report::openmetrics::{encode_text, Exposition, NodeMetrics, ProcessMetrics, ReclaimMetrics, Watermark};

/// The part refreshed every `--interval`.
#[derive(Debug, Clone, Default)]
struct Cached {
    irqs: Vec<(u32, String, bool)>,
    findings: Vec<(String, String)>,
    processes: Vec<ProcessMetrics>,
    errors: Vec<(String, u64)>,
    refreshed: Option<Instant>,
}

pub struct Collector {
    root: Root,
    pids: Vec<u32>,
    /// `None` for a tree that does not record it: watermarks, counted in
    /// pages, then have no byte series rather than a guessed one.
    base_page_bytes: Option<u64>,
    cache: Mutex<Cached>,
}

impl Collector {
    pub fn new(root: Root, pids: Vec<u32>) -> Self {
        let base_page_bytes = numasleuth_kernel::pages::base_page_bytes(&root);
        Collector {
            root,
            pids,
            base_page_bytes,
            cache: Mutex::new(Cached::default()),
        }
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
            out.push(ProcessMetrics {
                pid,
                comm: model.comm.clone(),
                bytes_by_node: model.bytes_by_node.iter().map(|(n, b)| (*n, *b)).collect(),
                remote_ratio,
            });
        }
        out
    }

    /// One scrape: the cheap files now, the cached part as last refreshed.
    pub fn scrape(&self) -> Exposition {
        let began = Instant::now();
        let mut e = Exposition::default();
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
