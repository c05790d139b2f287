//! Thread moves between CPUs and nodes, and AutoNUMA's page migrations:
//! the `migrations` command and its two `doctor --pid` findings.
//!
//! Pure: the collectors hand in each thread's moves (from the tracepoint,
//! exact, or from polling `stat`'s `processor`, a sampled view that misses
//! moves shorter than the interval) and two readings of each task's
//! `sched` (before and after); the node of each CPU comes from the model.

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;

use numasleuth_parse::IdList;

use crate::findings::{incident, Evidence, Finding, Severity};

pub mod refresh;

/// What the collectors hand in (`probe::migrations`, `top`).
pub use numasleuth_model::migrations::{Method, MoveCounter, NumaBalancing, TaskNuma, ThreadPath, MAX_MOVES_KEPT};

/// `migrations`' document: the window watched, each thread's moves,
/// AutoNUMA's state, and the findings (for one process; none for every
/// task). Report puts the schema over it; text renders the same value.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MigrationsDocument {
    pub pid: Option<u32>,
    pub method: Method,
    pub duration_s: f64,
    pub threads: Vec<ThreadMigrations>,
    #[serde(rename = "numa_balancing")]
    pub numa: NumaBalancing,
    pub findings: Vec<Finding>,
    pub notes: Vec<String>,
}

/// The finding of threads that change node faster than [`HOP_RATE_PER_S`].
pub const THREAD_HOPPING_NODES: &str = "thread-hopping-nodes";

/// `thread-hopping-nodes`: more node changes per second than this...
pub const HOP_RATE_PER_S: f64 = 1.0;
/// ...and at least this many, so one move in a short window is not a rate.
pub const HOP_MIN_MOVES: u64 = 3;

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ThreadMigrations {
    pub tid: u32,
    pub comm: String,
    pub cpu_migrations: u64,
    pub node_migrations: u64,
    pub node_migrations_per_s: f64,
    pub cpus_visited: Vec<u32>,
    pub nodes_visited: Vec<u32>,
    /// True when the move list was capped: node counts are lower bounds.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub path_truncated: bool,
}

/// Counts each thread's CPU and node changes; `node_of` maps a CPU to its
/// node (`None`: unknown CPU, counted as a CPU move only).
pub fn summarize(paths: &[ThreadPath], node_of: &BTreeMap<u32, u32>, duration_s: f64) -> Vec<ThreadMigrations> {
    let mut out: Vec<ThreadMigrations> = paths
        .iter()
        .map(|p| {
            let mut cpus = BTreeSet::new();
            let mut nodes = BTreeSet::new();
            let mut node_moves = 0u64;
            for &(from, to) in &p.path {
                cpus.extend([from, to]);
                let (a, b) = (node_of.get(&from), node_of.get(&to));
                nodes.extend(a.into_iter().chain(b).copied());
                if let (Some(a), Some(b)) = (a, b) {
                    node_moves += u64::from(a != b);
                }
            }
            ThreadMigrations {
                tid: p.tid,
                comm: p.comm.clone(),
                cpu_migrations: p.moves,
                node_migrations: node_moves,
                node_migrations_per_s: if duration_s > 0.0 {
                    node_moves as f64 / duration_s
                } else {
                    0.0
                },
                cpus_visited: cpus.into_iter().collect(),
                nodes_visited: nodes.into_iter().collect(),
                path_truncated: (p.path.len() as u64) < p.moves,
            }
        })
        .collect();
    out.sort_by(|a, b| (b.node_migrations, b.cpu_migrations, a.tid).cmp(&(a.node_migrations, a.cpu_migrations, b.tid)));
    out
}

/// The `doctor --pid` findings.
pub fn findings(
    pid: u32,
    threads: &[ThreadMigrations],
    numa: &NumaBalancing,
    method: &Method,
    duration_s: f64,
) -> Vec<Finding> {
    let mut out = Vec::new();
    let hoppers: Vec<&ThreadMigrations> = threads
        .iter()
        .filter(|t| t.node_migrations >= HOP_MIN_MOVES && t.node_migrations_per_s > HOP_RATE_PER_S)
        .collect();
    if !hoppers.is_empty() {
        out.push(hopping(pid, &hoppers, method, duration_s));
    }
    if let Some(pages) = numa.pages_migrated_during().filter(|p| *p > 0) {
        out.push(balancing(pid, pages, numa, duration_s));
    }
    out
}

/// `thread-hopping-nodes`: threads changing node faster than [`HOP_RATE_PER_S`].
fn hopping(pid: u32, hoppers: &[&ThreadMigrations], method: &Method, duration_s: f64) -> Finding {
    let (source, how, interval_ms) = match method {
        Method::Tracepoint => (
            "tracepoint:sched:sched_migrate_task".to_string(),
            "sched:sched_migrate_task".to_string(),
            None,
        ),
        Method::Sampled { interval_ms, .. } => (
            format!("/proc/{pid}/task/*/stat"),
            format!("/proc/{pid}/task/*/stat every {interval_ms} ms (a lower bound)"),
            Some(*interval_ms),
        ),
    };
    let mut evidence: Vec<Evidence> = hoppers
        .iter()
        .take(8)
        .map(|t| {
            let text = format!(
                "thread {} ({}) changed node {} times in {duration_s:.1} s ({:.1}/s), nodes {}, {} CPU moves",
                t.tid,
                t.comm,
                t.node_migrations,
                t.node_migrations_per_s,
                IdList::new(t.nodes_visited.clone()).to_human(),
                t.cpu_migrations
            );
            Evidence::new(source.clone(), text)
                .with("tid", t.tid)
                .with("node_migrations", t.node_migrations)
                .with("node_migrations_per_s", t.node_migrations_per_s)
                .with("duration_s", duration_s)
                .with("nodes_visited", t.nodes_visited.as_slice())
                .with("cpu_migrations", t.cpu_migrations)
        })
        .collect();
    evidence.push(
        Evidence::new(source, format!("counted from {how}"))
            .with("threads_hopping", hoppers.len())
            .with_some("interval_ms", interval_ms),
    );
    Finding {
        id: THREAD_HOPPING_NODES,
        severity: Severity::Warning,
        confidence: None,
        title: format!(
            "{} thread(s) of process {pid} move between NUMA nodes more than {HOP_RATE_PER_S} time(s) a second",
            hoppers.len()
        ),
        evidence,
        remedy: format!(
            "each hop leaves the thread's cache and memory behind on the other node: pin the threads \
             to one node's CPUs (`taskset -a -cp LIST {pid}`, or `numactl --cpunodebind=N` at start), \
             or confine the service with a cpuset; check `numasleuth migrations -p {pid}` afterwards"
        ),
        incident: Some(incident::REMOTE_GLOBAL),
        explains: Vec::new(),
    }
}

/// `numa-balancing-migrating`: AutoNUMA moved `pages` of the process's
/// pages during the window.
fn balancing(pid: u32, pages: u64, numa: &NumaBalancing, duration_s: f64) -> Finding {
    let before = numa.pages_migrated_before.unwrap_or(0);
    let after = numa.pages_migrated_after.unwrap_or(0);
    let text = format!(
        "numa_pages_migrated of process {pid}'s threads rose by {pages} in {duration_s:.1} s (/proc/{pid}/task/*/sched: {before} → {after})"
    );
    let mut evidence = vec![Evidence::new(format!("/proc/{pid}/task/*/sched"), text)
        .with("pages_migrated", pages)
        .with("pages_migrated_before", before)
        .with("pages_migrated_after", after)
        .with("duration_s", duration_s)];
    if let Some(mode) = numa.mode {
        evidence.push(
            Evidence::new(
                "/proc/sys/kernel/numa_balancing",
                format!("kernel.numa_balancing = {mode} (/proc/sys/kernel/numa_balancing)"),
            )
            .with("numa_balancing", mode),
        );
    }
    let preferred: BTreeSet<u32> = numa.tasks.iter().filter_map(|t| t.numa_preferred_nid).collect();
    if !preferred.is_empty() {
        let preferred: IdList = preferred.into_iter().collect();
        evidence.push(
            Evidence::new(
                format!("/proc/{pid}/task/*/sched"),
                format!("preferred nodes of its threads: {}", preferred.to_human()),
            )
            .with("preferred_nodes", &preferred),
        );
    }
    Finding {
        id: "numa-balancing-migrating",
        severity: Severity::Info,
        confidence: None,
        title: format!("AutoNUMA is migrating pages of process {pid} ({pages} pages in {duration_s:.1} s)"),
        evidence,
        remedy: "pages follow the threads that fault on them; if the threads also move (see \
                 thread-hopping-nodes) pages chase them back and forth: bind threads and memory \
                 (`numactl --cpunodebind=N --membind=N`), or turn balancing off with \
                 `sysctl kernel.numa_balancing=0` when placement is managed by hand"
            .to_string(),
        incident: None,
        explains: Vec::new(),
    }
}

#[cfg(test)]
mod tests;
