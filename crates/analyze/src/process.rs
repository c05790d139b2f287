//! Findings about one process's placement: pure functions of the
//! [`ProcessModel`] and the machine's [`Topology`].
//!
//! The first is the database incident itself: writable static data (a hot
//! global in `.bss`) on one node while every thread runs on another, so
//! every write is a remote invalidation. The others are the usual ways a
//! process's memory and threads drift apart.

use numasleuth_model::units::bytes as human_bytes;
use std::collections::BTreeMap;

use numasleuth_model::process::{Accuracy, KindGroup, NodeCounts, ProcessModel};
use numasleuth_model::Topology;
use numasleuth_parse::IdList;

use crate::findings::{incident, Evidence, Finding, Severity};

/// Memory "sits on one node" when that node holds at least this share…
const ONE_NODE_SHARE: f64 = 0.9;
/// …of at least this much resident memory (smaller is noise).
const SPREAD_MIN_BYTES: u64 = 1 << 20;

pub fn findings(model: &ProcessModel, topology: &Topology) -> Vec<Finding> {
    let mut out = Vec::new();
    out.extend(static_data_remote(model));
    out.extend(policy_binds_cpuless_node(model, topology));
    out.extend(threads_spread_memory_local(model));
    out.extend(interleave_in_use(model, topology));
    out
}

/// `node 0: 32 KiB, node 1: 32 KiB`.
fn bytes_text(counts: &NodeCounts) -> String {
    counts
        .iter()
        .map(|(n, b)| format!("node {n}: {}", human_bytes(*b)))
        .collect::<Vec<_>>()
        .join(", ")
}

fn nodes_text(counts: &NodeCounts, unit: &str) -> String {
    let parts: Vec<String> = counts
        .iter()
        .map(|(n, c)| {
            format!(
                "node {n}: {c} {}",
                if *c == 1 { unit.trim_end_matches('s') } else { unit }
            )
        })
        .collect();
    parts.join(", ")
}

/// Threads whose last CPU is outside their allowed set, named one by one
/// up to this many.
const MOVED_THREADS_SHOWN: usize = 4;

/// Where the threads run, as evidence: the CPUs they last ran on, and
/// each thread placed by its allowed CPUs instead (its last CPU is one it
/// may no longer use), said so.
fn threads_evidence(model: &ProcessModel) -> Vec<Evidence> {
    let stat = format!("/proc/{}/task/*/stat", model.pid);
    let moved: Vec<_> = model
        .threads
        .iter()
        .filter_map(|t| Some((t, t.moved_away()?)))
        .collect();
    if moved.is_empty() {
        let cpus: IdList = model.threads.iter().filter_map(|t| t.cpu).collect();
        let text = format!(
            "{} thread(s) last ran on CPUs {cpus} (node {}) (/proc/{}/task/*/stat)",
            model.threads.len(),
            model.thread_nodes,
            model.pid
        );
        return vec![Evidence::new(stat, text)
            .with("threads", model.threads.len())
            .with("cpus", &cpus)
            .with("nodes", &model.thread_nodes)];
    }
    let text = format!(
        "{} thread(s) run on node {}: {} of them by the CPUs they may use, not the CPU they last ran on \
         (/proc/{}/task/*/stat `processor`, status `Cpus_allowed_list`)",
        model.threads.len(),
        model.thread_nodes,
        moved.len(),
        model.pid
    );
    let mut out = vec![Evidence::new(stat.clone(), text)
        .with("threads", model.threads.len())
        .with("nodes", &model.thread_nodes)
        .with("threads_moved", moved.len())];
    out.extend(moved.iter().take(MOVED_THREADS_SHOWN).map(|(thread, text)| {
        Evidence::new(format!("/proc/{}/task/{}/status", model.pid, thread.tid), text.clone())
            .with("tid", thread.tid)
            .with_some("last_cpu", thread.cpu)
            .with_some("allowed_cpus", thread.allowed_cpus.as_ref())
    }));
    if moved.len() > MOVED_THREADS_SHOWN {
        out.push(
            Evidence::new(
                stat,
                format!("… and {} more such thread(s)", moved.len() - MOVED_THREADS_SHOWN),
            )
            .with("threads_not_shown", moved.len() - MOVED_THREADS_SHOWN),
        );
    }
    out
}

/// One object's section as the static-data check sees it.
struct Piece<'a> {
    section: &'a str,
    /// As listed: a page shared with a neighbouring section is in both.
    counts: &'a NodeCounts,
    /// What the totals count: each page once.
    counted: &'a NodeCounts,
    /// Pages listed here but counted under the neighbouring section.
    shared: u64,
    /// Counted pages (each page once) on and off the threads' node.
    local: u64,
    off: u64,
    exact: bool,
}

/// The id of [`static_data_remote`]'s finding.
pub const STATIC_DATA_REMOTE: &str = "static-data-remote";

/// Writable static data (.data, .bss, .got) mostly on nodes where no
/// thread runs, while all threads run on one node.
pub fn static_data_remote(model: &ProcessModel) -> Option<Finding> {
    let [home] = model.thread_nodes.ids() else {
        return None;
    };
    let remote = remote_static_pieces(model, *home);
    if remote.is_empty() {
        return None;
    }
    let program = model.program.as_deref();
    let off_pages = |object: &str| remote[object].iter().map(|p| p.off).sum::<u64>();
    let worst = program
        .filter(|p| remote.contains_key(p))
        .or_else(|| remote.keys().copied().max_by_key(|o| off_pages(o)))?;
    let mut far = NodeCounts::new();
    for piece in &remote[worst] {
        for (node, pages) in piece.counted.iter().filter(|(n, _)| *n != home) {
            *far.entry(*node).or_default() += pages;
        }
    }
    let far_node = far.iter().max_by_key(|(_, p)| **p).map(|(n, _)| *n)?;
    let hottest = remote[worst]
        .iter()
        // The section with the most pages away names the `move` to run;
        // .bss wins a tie, as the usual home of hot globals.
        .max_by_key(|p| (p.off, p.section == ".bss"))
        .map(|p| p.section)
        .unwrap_or(".bss");
    let mut evidence = threads_evidence(model);
    let lines = section_lines(&remote, *home, model.pid);
    let shown = lines.len().min(6);
    // Each line already names its source and accuracy.
    evidence.extend(lines.iter().take(shown).map(|(_, line)| line.clone()));
    if lines.len() > shown {
        evidence.push(
            Evidence::new(
                format!("/proc/{}/numa_maps", model.pid),
                format!("… and {} more section(s) off node {home}", lines.len() - shown),
            )
            .with("sections_not_shown", lines.len() - shown),
        );
    }
    evidence.extend(hinting_note(model, worst));
    Some(Finding {
        id: STATIC_DATA_REMOTE,
        severity: Severity::Warning,
        confidence: None,
        title: format!(
            "writable static data of {worst} is on node {far_node} while all {} threads run on node {home}",
            model.threads.len()
        ),
        evidence,
        remedy: format!(
            "Every write to a global there is a remote cache-line invalidation. Start the process on node {home} \
             (`numactl --cpunodebind={home} --membind={home} CMD`) so it first-touches its globals locally, or bind \
             its memory (`numactl --membind={home}`), or move the pages now: \
             `numasleuth move -p {} --section {hottest} --to-node {home} --apply`",
            model.pid
        ),
        incident: Some(incident::REMOTE_GLOBAL),
        explains: Vec::new(),
    })
}

/// Per object, its writable static sections' pieces, kept only for the
/// objects with at least as many pages off `home` as on it (and some).
fn remote_static_pieces(model: &ProcessModel, home: u32) -> BTreeMap<&str, Vec<Piece<'_>>> {
    let mut remote: BTreeMap<&str, Vec<Piece>> = BTreeMap::new();
    for usage in &model.mappings {
        // RELRO (.data.rel.ro, .got, .init_array) is mapped read-only once
        // relocated: it cannot be written, so it cannot cause remote
        // invalidations, and moving .bss must be able to clear the finding.
        if usage.kind.group() != KindGroup::WritableStatic || !usage.perms.write {
            continue;
        }
        let (Some(object), Some(section)) = (&usage.object, &usage.section) else {
            continue;
        };
        // Counted pages only: the page .data's end shares with .bss's start
        // is one page, not one per section.
        let counted = &usage.counted_pages_by_node;
        let local = counted.get(&home).copied().unwrap_or(0);
        let off: u64 = counted.values().sum::<u64>() - local;
        let exact = usage.accuracy == Accuracy::PerPage;
        remote.entry(object).or_default().push(Piece {
            section,
            counts: &usage.pages_by_node,
            counted,
            shared: usage.shared_pages(),
            local,
            off,
            exact,
        });
    }
    remote.retain(|_, sections| {
        let (local, off) = sections.iter().fold((0, 0), |(l, o), p| (l + p.local, o + p.off));
        off > 0 && off >= local
    });
    remote
}

/// One evidence line per section with pages off `home` (a section split
/// over two mappings is summed), with its page count off `home`, largest
/// first.
fn section_lines(remote: &BTreeMap<&str, Vec<Piece<'_>>>, home: u32, pid: u32) -> Vec<(u64, Evidence)> {
    let mut lines: Vec<(u64, Evidence)> = Vec::new();
    for (object, sections) in remote {
        let mut by_section: BTreeMap<&str, (NodeCounts, bool, u64)> = BTreeMap::new();
        for piece in sections {
            let (sum, all_exact, shared) = by_section.entry(piece.section).or_insert((NodeCounts::new(), true, 0));
            *all_exact &= piece.exact;
            *shared += piece.shared;
            for (node, pages) in piece.counts.iter() {
                *sum.entry(*node).or_default() += pages;
            }
        }
        for (section, (counts, exact, shared)) in by_section {
            let off: u64 = counts.iter().filter(|(n, _)| **n != home).map(|(_, p)| p).sum();
            let how = if exact {
                "per page via move_pages"
            } else {
                "per mapping"
            };
            // Listed per section, a page two sections share shows in both
            // lines: say so, so the lines are not added up.
            let sharing = match shared {
                0 => String::new(),
                1 => ", 1 page shared with a neighbouring section and counted there".into(),
                n => format!(", {n} pages shared with neighbouring sections and counted there"),
            };
            if off > 0 {
                let text = format!(
                    "{object} {section}: {}{sharing} (/proc/{pid}/numa_maps, {how})",
                    nodes_text(&counts, "pages")
                );
                let line = Evidence::new(format!("/proc/{pid}/numa_maps"), text)
                    .by_node("pages_by_node", &counts)
                    .with("pages_off_node", off)
                    .with("shared_pages", shared);
                lines.push((off, line));
            }
        }
    }
    lines.sort_by_key(|(off, _)| std::cmp::Reverse(*off));
    lines
}

/// Without this, the remedy's `move` looked as if it could not move the
/// pages between hinting faults; it can, and says how.
fn hinting_note(model: &ProcessModel, worst: &str) -> Option<Evidence> {
    let hinting: u64 = model
        .mappings
        .iter()
        .filter(|m| m.object.as_deref() == Some(worst) && m.kind.group() == KindGroup::WritableStatic)
        .map(|m| m.hinting_fault_pages)
        .sum();
    (hinting > 0).then(|| {
        let text = format!(
            "{hinting} of these pages are between NUMA-balancing hinting faults: resident (/proc/{}/pagemap) but \
             invisible to move_pages until the process touches them; `numasleuth move --apply` reads each once to \
             end the fault, then moves it",
            model.pid
        );
        Evidence::new(format!("/proc/{}/pagemap", model.pid), text).with("hinting_fault_pages", hinting)
    })
}

/// A bind/prefer policy naming nodes where the process cannot run.
pub fn policy_binds_cpuless_node(model: &ProcessModel, topology: &Topology) -> Vec<Finding> {
    let allowed: IdList = model
        .threads
        .iter()
        .filter_map(|t| t.allowed_cpus.as_ref())
        .flat_map(|c| c.iter())
        .collect();
    let allowed = if allowed.is_empty() {
        topology.online_cpus()
    } else {
        allowed
    };
    let mut out = Vec::new();
    for policy in model.policies.iter().filter(|p| p.mode.restricts_nodes()) {
        let Some(nodes) = &policy.nodes else { continue };
        let mut why = Vec::new();
        for node in nodes.iter() {
            let source = format!("/sys/devices/system/node/node{node}/cpulist");
            match topology.node(node) {
                Some(n) if !n.has_cpus() => why.push(
                    Evidence::new(source, format!("node {node} has no CPUs (memory-only node)")).with("node", node),
                ),
                Some(n) if n.cpus.intersection(&allowed).is_empty() => why.push(
                    Evidence::new(
                        source,
                        format!(
                            "node {node}'s CPUs {} are outside the process's allowed CPUs {allowed}",
                            n.cpus
                        ),
                    )
                    .with("node", node)
                    .with("node_cpus", &n.cpus)
                    .with("allowed_cpus", &allowed),
                ),
                _ => {}
            }
        }
        if why.is_empty() {
            continue;
        }
        let bytes: u64 = policy.bytes_by_node.values().sum();
        let text = format!(
            "policy {} governs {} mapping(s) holding {} (/proc/{}/numa_maps)",
            policy.policy,
            policy.mappings,
            human_bytes(bytes),
            model.pid
        );
        let mut evidence = vec![Evidence::new(format!("/proc/{}/numa_maps", model.pid), text)
            .with("mappings", policy.mappings)
            .with("bytes", bytes)
            .with("policy_nodes", nodes)];
        evidence.extend(why);
        let cpu_nodes: IdList = topology
            .nodes
            .iter()
            .filter(|n| !n.cpus.intersection(&allowed).is_empty())
            .map(|n| n.id)
            .collect();
        out.push(Finding {
            id: "policy-binds-cpuless-node",
            severity: Severity::Warning,
            confidence: None,
            title: format!(
                "memory policy {} puts memory on node(s) where process {} has no CPUs",
                policy.policy, model.pid
            ),
            evidence,
            remedy: format!(
                "Every access to that memory is remote. Bind to the nodes the process runs on (`numactl --membind={cpu_nodes} CMD`), \
                 or, if the far node is intentional capacity memory (CXL, HBM), use `--preferred` and keep hot data local"
            ),
            incident: Some(incident::REMOTE_GLOBAL),
            explains: Vec::new(),
        });
    }
    out
}

/// Threads on several nodes while (nearly) all memory sits on one.
pub fn threads_spread_memory_local(model: &ProcessModel) -> Option<Finding> {
    if model.thread_nodes.len() < 2 {
        return None;
    }
    let total = model.total_bytes();
    let (node, bytes) = model.bytes_by_node.iter().max_by_key(|(_, b)| **b)?;
    if total < SPREAD_MIN_BYTES || (*bytes as f64) < ONE_NODE_SHARE * total as f64 {
        return None;
    }
    let share = *bytes as f64 / total as f64 * 100.0;
    let mut per_node: BTreeMap<u32, usize> = BTreeMap::new();
    for thread in &model.threads {
        if let Some(n) = thread.node {
            *per_node.entry(n).or_default() += 1;
        }
    }
    let spread: Vec<String> = per_node.iter().map(|(n, c)| format!("{c} on node {n}")).collect();
    Some(Finding {
        id: "threads-spread-memory-local",
        severity: Severity::Warning,
        confidence: None,
        title: format!(
            "threads run on nodes {} while {share:.0}% of memory sits on node {node}",
            model.thread_nodes
        ),
        evidence: vec![
            Evidence::new(
                format!("/proc/{}/task/*/stat", model.pid),
                format!("threads: {} (/proc/{}/task/*/stat)", spread.join(", "), model.pid),
            )
            .with("nodes", per_node.keys().copied().collect::<Vec<u32>>())
            .with(
                "threads_by_node",
                per_node.values().map(|c| *c as u64).collect::<Vec<u64>>().as_slice(),
            ),
            Evidence::new(
                format!("/proc/{}/numa_maps", model.pid),
                format!(
                    "resident memory: {} (/proc/{}/numa_maps)",
                    bytes_text(&model.bytes_by_node),
                    model.pid
                ),
            )
            .by_node("bytes_by_node", &model.bytes_by_node),
        ],
        remedy: format!(
            "Threads off node {node} reach all of it remotely. Confine the process to one node \
             (`numactl --cpunodebind={node} --membind={node} CMD`), have each thread first-touch the data it uses, \
             or interleave data every thread shares (`numactl --interleave=all CMD`)"
        ),
        incident: Some(incident::REMOTE_GLOBAL),
        explains: Vec::new(),
    })
}

/// Interleaving is a choice worth knowing about: good for shared data,
/// wrong for per-thread data. Only where it spreads pages over two nodes
/// or more: `interleave:0` on a one-node machine places exactly as the
/// default does, so there is nothing to say.
pub fn interleave_in_use(model: &ProcessModel, topology: &Topology) -> Option<Finding> {
    let spans_nodes = |nodes: Option<&IdList>| nodes.map_or(topology.nodes.len(), IdList::len) >= 2;
    let policies: Vec<_> = model
        .policies
        .iter()
        .filter(|p| p.mode.interleaves() && spans_nodes(p.nodes.as_ref()))
        .collect();
    if policies.is_empty() {
        return None;
    }
    let evidence = policies
        .iter()
        .map(|p| {
            let text = format!(
                "policy {} on {} mapping(s): {} (/proc/{}/numa_maps)",
                p.policy,
                p.mappings,
                bytes_text(&p.bytes_by_node),
                model.pid
            );
            Evidence::new(format!("/proc/{}/numa_maps", model.pid), text)
                .with("mappings", p.mappings)
                .by_node("bytes_by_node", &p.bytes_by_node)
        })
        .collect();
    Some(Finding {
        id: "interleave-in-use",
        severity: Severity::Info,
        confidence: None,
        title: format!("process {} interleaves memory across nodes", model.pid),
        evidence,
        remedy: "Interleaving spreads bandwidth for data all threads share; data one thread uses is better local \
                 (`numactl --localalloc`, or first touch in that thread)"
            .into(),
        incident: Some(incident::INTERCONNECT),
        explains: Vec::new(),
    })
}

#[cfg(test)]
#[path = "process_tests.rs"]
pub(crate) mod tests;
