//! The remote global: throughput per placement of the global, the cost of
//! one invalidation, and the incident's bottleneck model,
//! ops/s ceiling ≈ frequency / (writes per op × cycles per invalidation),
//! set beside the ceiling actually measured.

use numasleuth_model::lab::Global;
use serde::Serialize;

mod warnings;
pub use warnings::{warnings, RunShape};

use super::{factor, rate, slowdown, throughput, Ratio, Raw};
use crate::stats::Summary;
use crate::timing::TimedSamples;

/// The incident's figures: ~3 writes per query, ~2,000 cycles per remote
/// invalidation at 3 GHz, a ceiling of ~500k queries/s.
pub const INCIDENT_WRITES_PER_OP: f64 = 3.0;
pub const INCIDENT_CYCLES_PER_INVALIDATION: f64 = 2000.0;
pub const INCIDENT_CEILING_OPS_PER_SEC: f64 = 500_000.0;

/// Below this growth from 1 thread to the most, a curve has flattened.
const PLATEAU_GROWTH: f64 = 1.25;

#[derive(Debug, Clone, PartialEq)]
pub struct Measured {
    pub global: Global,
    pub threads: usize,
    pub cpus: Vec<u32>,
    /// Node of the shared global; for per-thread copies, the workers' node.
    pub global_node: u32,
    pub placement_verified: bool,
    pub raw: Vec<Raw>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Row {
    pub global: Global,
    pub threads: usize,
    pub cpus: Vec<u32>,
    pub global_node: u32,
    pub ops_per_sec: Summary,
    pub ops_per_sec_per_thread: Summary,
    /// Against per-thread copies at the same thread count.
    pub slowdown_vs_per_thread: Option<Ratio>,
    pub placement_verified: bool,
    /// Least share of its CPU a thread had (see `Raw::cpu_share`).
    pub cpu_share: Option<Summary>,
    pub raw: Vec<Raw>,
}

/// A measured line transfer (compare-and-swap ping-pong between two of
/// the workers' CPUs), with the line's memory on `home_node`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Transfer {
    pub global: Global,
    pub home_node: u32,
    pub cpus: [u32; 2],
    pub ns: Summary,
}

impl Transfer {
    /// The transfer's figure from its raw timing; `None` when no sample
    /// gave one.
    pub fn from_timing(global: Global, home_node: u32, cpus: [u32; 2], timing: &TimedSamples) -> Option<Transfer> {
        timing.summary().map(|ns| Transfer {
            global,
            home_node,
            cpus,
            ns,
        })
    }
}

/// The bottleneck model for one shared placement.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Model {
    pub global: Global,
    pub writes_per_op: u32,
    pub ns_per_invalidation: f64,
    pub cycles_per_invalidation: Option<f64>,
    /// 1e9 / (writes_per_op × ns_per_invalidation).
    pub ceiling_ops_per_sec: f64,
    /// The best median throughput over the runs with two or more threads.
    pub measured_ceiling_ops_per_sec: f64,
    pub measured_at_threads: usize,
    /// 1e9 / (writes_per_op × measured ceiling): the cost per write the
    /// measured ceiling implies if the line were the only bottleneck.
    pub implied_ns_per_write: f64,
}

pub fn rows(measured: Vec<Measured>) -> Vec<Row> {
    let mut rows: Vec<Row> = measured
        .into_iter()
        .filter_map(|m| {
            let t = throughput(&m.raw)?;
            Some(Row {
                global: m.global,
                threads: m.threads,
                cpus: m.cpus,
                global_node: m.global_node,
                ops_per_sec: t.ops_per_sec,
                ops_per_sec_per_thread: t.ops_per_sec_per_thread,
                slowdown_vs_per_thread: None,
                placement_verified: m.placement_verified,
                cpu_share: t.cpu_share,
                raw: m.raw,
            })
        })
        .collect();
    let fixed: Vec<(usize, Summary)> = rows
        .iter()
        .filter(|r| r.global == Global::PerThread)
        .map(|r| (r.threads, r.ops_per_sec))
        .collect();
    for row in rows.iter_mut().filter(|r| r.global != Global::PerThread) {
        let fix = fixed.iter().find(|f| f.0 == row.threads);
        row.slowdown_vs_per_thread = fix.and_then(|f| slowdown(&row.ops_per_sec, &f.1));
    }
    rows
}

pub fn models(rows: &[Row], transfers: &[Transfer], writes_per_op: u32, cycles_per_ns: Option<f64>) -> Vec<Model> {
    let k = f64::from(writes_per_op.max(1));
    transfers
        .iter()
        .filter(|t| t.ns.median > 0.0)
        .filter_map(|t| {
            // One thread owns the line alone and invalidates nothing, so
            // only contended runs say anything about the ceiling.
            let best = rows
                .iter()
                .filter(|r| r.global == t.global && r.threads >= 2)
                .max_by(|a, b| a.ops_per_sec.median.total_cmp(&b.ops_per_sec.median))?;
            Some(Model {
                global: t.global,
                writes_per_op,
                ns_per_invalidation: t.ns.median,
                cycles_per_invalidation: cycles_per_ns.map(|c| c * t.ns.median),
                ceiling_ops_per_sec: 1e9 / (k * t.ns.median),
                measured_ceiling_ops_per_sec: best.ops_per_sec.median,
                measured_at_threads: best.threads,
                implied_ns_per_write: 1e9 / (k * best.ops_per_sec.median),
            })
        })
        .collect()
}

/// The "what this means" lines.
pub fn meaning(rows: &[Row], models: &[Model], remote_possible: bool, writes_per_op: u32) -> Vec<String> {
    let mut lines = Vec::new();
    if !remote_possible {
        lines.push(
            "This machine has one NUMA node (or no second node with memory), so the remote global cannot be shown \
             here; below is the same contention between cores of one node, where a line moves more cheaply than \
             between sockets."
                .to_string(),
        );
    }
    let most = rows.iter().map(|r| r.threads).max().unwrap_or(0);
    let at = |global: Global, threads: usize| rows.iter().find(|r| r.global == global && r.threads == threads);
    for global in [Global::Local, Global::Remote] {
        let Some(shared) = at(global, most) else { continue };
        let Some(ratio) = shared.slowdown_vs_per_thread else {
            continue;
        };
        let head = format!(
            "{most} thread{} writing one global on node {} {writes_per_op}× per operation: {} against {} with a \
             per-thread copy",
            if most == 1 { "" } else { "s" },
            shared.global_node,
            rate(shared.ops_per_sec.median),
            rate(shared.ops_per_sec.median * ratio.median),
        );
        lines.push(if most < 2 {
            format!(
                "{head}; one thread owns the line alone, so nothing is invalidated (run --thread-sweep 1,2 or more)."
            )
        } else if ratio.clearly_slower() {
            format!(
                "{head}, {} slower: every write must first take the line from the core that wrote it last.",
                ratio.describe()
            )
        } else {
            format!("{head}: no clear cost from sharing ({}).", ratio.describe())
        });
    }
    if let (Some(local), Some(remote)) = (at(Global::Local, most), at(Global::Remote, most)) {
        if let Some(ratio) = slowdown(&remote.ops_per_sec, &local.ops_per_sec) {
            let place = format!(
                "With the global on remote node {} instead of local node {}",
                remote.global_node, local.global_node
            );
            lines.push(if ratio.clearly_slower() {
                format!(
                    "{place}, throughput was {} lower: the slow mode of a service whose hot global \
                     lives on the other node: each invalidation also involves the remote node that is the line's home.",
                    ratio.describe()
                )
            } else if ratio.clearly_faster() {
                format!(
                    "{place}, throughput was higher (local/remote {}), so this machine shows no remote penalty.",
                    ratio.describe()
                )
            } else {
                format!(
                    "{place}, throughput did not clearly change (local/remote {}): where the line lives mattered \
                     little here.",
                    ratio.describe()
                )
            });
        }
    }
    lines.extend(plateau(rows, most));
    lines.extend(models.iter().map(model_line));
    lines
}

/// Within this factor of the model, the line is taken to be the bottleneck.
const MODEL_AGREEMENT: f64 = 2.0;

fn model_line(model: &Model) -> String {
    // The classic form, frequency / (K × cycles), when the cycle rate
    // is known; the same number as 1 s / (K × ns).
    let cycles = match model.cycles_per_invalidation {
        Some(c) if model.ns_per_invalidation > 0.0 => format!(
            "{:.2} GHz / ({} {} × {c:.0} cycles) = ",
            c / model.ns_per_invalidation,
            model.writes_per_op,
            if model.writes_per_op == 1 { "write" } else { "writes" }
        ),
        _ => String::new(),
    };
    let head = format!(
        "Bottleneck model, {} global: ceiling ≈ {cycles}1 s / ({} {} × {:.0} ns per transfer) = {} (for scale: a \
         3 GHz server whose remote transfer costs 2,000 cycles, with 3 writes per operation, tops out at 500k \
         ops/s); measured best {} at {} threads",
        model.global,
        model.writes_per_op,
        if model.writes_per_op == 1 { "write" } else { "writes" },
        model.ns_per_invalidation,
        rate(model.ceiling_ops_per_sec),
        rate(model.measured_ceiling_ops_per_sec),
        model.measured_at_threads,
    );
    let over = model.measured_ceiling_ops_per_sec / model.ceiling_ops_per_sec;
    if over > MODEL_AGREEMENT {
        format!(
            "{head}, {}× above it. So most writes did not have to fetch the line: at {:.0} ns per write against \
             {:.0} ns per transfer, about one write in {:.0} did, because with {} writers a core often gets \
             several writes in before another takes the line. The model assumes every write invalidates, which \
             holds once many cores queue for the line, as on an 80-core server.",
            factor(over),
            model.implied_ns_per_write,
            model.ns_per_invalidation,
            (model.ns_per_invalidation / model.implied_ns_per_write).max(1.0),
            model.measured_at_threads,
        )
    } else if over < 1.0 / MODEL_AGREEMENT {
        format!(
            "{head}, {}× below it: something besides this line limits throughput (the private work, or other \
             shared resources).",
            factor(1.0 / over)
        )
    } else {
        format!(
            "{head}, {:.0}% of it: the line is the bottleneck, as when one global caps a whole server (the measured ceiling implies {:.0} \
             ns per write).",
            100.0 * over,
            model.implied_ns_per_write
        )
    }
}

/// Did adding threads stop helping the shared global while the fix kept
/// scaling? That flat line is what the incident saw at 500k ops/s.
fn plateau(rows: &[Row], most: usize) -> Option<String> {
    let growth = |global: Global| {
        let one = rows.iter().find(|r| r.global == global && r.threads == 1)?;
        let all = rows.iter().find(|r| r.global == global && r.threads == most)?;
        Some(all.ops_per_sec.median / one.ops_per_sec.median)
    };
    if most < 2 {
        return None;
    }
    let (shared, fixed) = (growth(Global::Local)?, growth(Global::PerThread)?);
    let verdict = if fixed < PLATEAU_GROWTH {
        "the fix did not scale either, so these CPUs share something besides the global (SMT siblings on the \
         host, a busy host); compare the global with the fix at the same thread count, not with one thread"
    } else if shared < PLATEAU_GROWTH {
        "the shared global has reached its ceiling: more threads add no throughput, the signature of one global capping a service"
    } else if shared < fixed / PLATEAU_GROWTH {
        "the shared global scales worse than the fix"
    } else {
        "both scale alike at this thread count"
    };
    Some(format!(
        "From 1 to {most} threads the shared global's throughput grew {}× and the per-thread copies' {}×: {verdict}.",
        factor(shared),
        factor(fixed)
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn measured(global: Global, threads: usize, total_ops_per_ms: u64, node: u32) -> Measured {
        Measured {
            global,
            threads,
            cpus: (0..threads as u32).collect(),
            global_node: node,
            placement_verified: true,
            raw: [0.98, 1.0, 1.02]
                .iter()
                .map(|f| Raw {
                    span_ns: (1e6 * f) as u64,
                    ops_per_thread: vec![total_ops_per_ms / threads as u64; threads],
                    cpu_ns_per_thread: Vec::new(),
                })
                .collect(),
        }
    }

    fn summary(median: f64) -> Summary {
        Summary {
            median,
            p10: median,
            p90: median,
            samples: 5,
        }
    }

    #[test]
    fn incident_model_reproduces_500k() {
        let rows = rows(vec![measured(Global::Remote, 8, 450, 1)]);
        // 2,000 cycles at 3 cycles/ns is 666.7 ns.
        let transfer = Transfer {
            global: Global::Remote,
            home_node: 1,
            cpus: [0, 1],
            ns: summary(INCIDENT_CYCLES_PER_INVALIDATION / 3.0),
        };
        let model = &models(&rows, &[transfer], 3, Some(3.0))[0];
        assert!((model.ceiling_ops_per_sec - INCIDENT_CEILING_OPS_PER_SEC).abs() < 1.0);
        assert!((model.cycles_per_invalidation.unwrap() - 2000.0).abs() < 1e-6);
        assert!((model.measured_ceiling_ops_per_sec - 450_000.0).abs() < 20_000.0);
        let implied = 1e9 / (3.0 * model.measured_ceiling_ops_per_sec);
        assert!((model.implied_ns_per_write - implied).abs() < 1e-6);
        let line = model_line(model);
        assert!(
            line.contains(
                "ceiling ≈ 3.00 GHz / (3 writes × 2000 cycles) = 1 s / (3 writes × 667 ns per transfer) = 500 k ops/s"
            ),
            "{line}"
        );
        assert!(line.contains("% of it: the line is the bottleneck"), "{line}");
    }

    #[test]
    fn a_model_far_below_the_measurement_says_why() {
        let rows = rows(vec![
            measured(Global::Local, 1, 90_000, 0),
            measured(Global::Local, 2, 20_000, 0),
        ]);
        let transfer = Transfer {
            global: Global::Local,
            home_node: 0,
            cpus: [0, 1],
            ns: summary(100.0),
        };
        let model = &models(&rows, &[transfer], 3, None)[0];
        // One thread invalidates nothing, so the ceiling comes from 2 threads.
        assert_eq!(model.measured_at_threads, 2);
        let line = model_line(model);
        assert!(line.contains("6.00× above it"), "{line}");
        assert!(line.contains("about one write in 6 did"), "{line}");
        let single = rows_single();
        assert!(models(&single, &[], 3, None).is_empty());
    }

    fn rows_single() -> Vec<Row> {
        rows(vec![measured(Global::Local, 1, 1000, 0)])
    }

    #[test]
    fn sharing_remote_and_plateau_are_explained() {
        let rows = rows(vec![
            measured(Global::Local, 1, 10_000, 0),
            measured(Global::Local, 4, 10_500, 0),
            measured(Global::Remote, 4, 5_000, 1),
            measured(Global::PerThread, 1, 10_000, 0),
            measured(Global::PerThread, 4, 40_000, 0),
        ]);
        assert!(rows[1].slowdown_vs_per_thread.unwrap().clearly_slower());
        let lines = meaning(&rows, &[], true, 3);
        assert!(lines[0].starts_with("4 threads writing one global on node 0 3× per operation: 10.5 M ops/s"));
        assert!(lines[0].contains("slower: every write"), "{lines:?}");
        assert!(
            lines[2].starts_with("With the global on remote node 1 instead of local node 0, throughput was 2.10×"),
            "{lines:?}"
        );
        assert!(lines[3].contains("reached its ceiling"), "{lines:?}");
    }

    #[test]
    fn a_fix_that_does_not_scale_is_not_blamed_on_the_global() {
        let rows = rows(vec![
            measured(Global::Local, 1, 10_000, 0),
            measured(Global::Local, 2, 7_000, 0),
            measured(Global::PerThread, 1, 10_000, 0),
            measured(Global::PerThread, 2, 10_500, 0),
        ]);
        let lines = meaning(&rows, &[], true, 3);
        assert!(lines[1].contains("the fix did not scale either"), "{lines:?}");
    }

    #[test]
    fn one_node_says_so_first() {
        let rows = rows(vec![
            measured(Global::Local, 2, 1000, 0),
            measured(Global::PerThread, 2, 1000, 0),
        ]);
        let lines = meaning(&rows, &[], false, 3);
        assert!(lines[0].starts_with("This machine has one NUMA node"));
        assert!(lines[1].contains("no clear cost from sharing"));
    }
}
