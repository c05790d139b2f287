//! False sharing: per-thread time for 10M operations (the talk's metric),
//! slowdowns against one thread and against padded counters, and what
//! they say.

use numasleuth_model::lab::{Layout, Op, Placement};
use serde::Serialize;

use super::{factor, slowdown, throughput, Ratio, Raw};
use crate::stats::{summarize, Summary};

/// The talk's unit of work: 10 million operations per thread.
pub const OPS_PER_THREAD_IN_TALK: f64 = 1e7;

/// What the talk measured on an 8-socket, 80-core Westmere-EX.
pub const TALK_MS_1_THREAD: f64 = 29.7;
pub const TALK_MS_80_THREADS: f64 = 6520.0;

/// One configuration as measured.
#[derive(Debug, Clone, PartialEq)]
pub struct Measured {
    pub layout: Layout,
    pub op: Op,
    pub placement: Placement,
    pub threads: usize,
    pub cpus: Vec<u32>,
    pub counts_verified: bool,
    pub raw: Vec<Raw>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Row {
    pub layout: Layout,
    pub op: Op,
    pub placement: Placement,
    pub threads: usize,
    pub cpus: Vec<u32>,
    pub ops_per_sec: Summary,
    pub ops_per_sec_per_thread: Summary,
    /// Wall time one thread needs for 10M operations at this rate.
    pub ms_per_10m_ops_per_thread: Summary,
    /// Per-thread time against the same variant with one thread.
    pub slowdown_vs_1_thread: Option<Ratio>,
    /// Per-thread time against padded counters at the same thread count
    /// (packed rows only).
    pub slowdown_vs_padded: Option<Ratio>,
    /// Every counter equalled its thread's operation count.
    pub counts_verified: bool,
    /// Least share of its CPU a thread had (see `Raw::cpu_share`).
    pub cpu_share: Option<Summary>,
    pub raw: Vec<Raw>,
}

/// What tells one row from another.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Config {
    layout: Layout,
    op: Op,
    placement: Placement,
    threads: usize,
}

impl Config {
    fn of(row: &Row) -> Self {
        Config {
            layout: row.layout,
            op: row.op,
            placement: row.placement,
            threads: row.threads,
        }
    }
}

/// Rows in the order measured; configurations without a usable sample
/// are left out.
pub fn rows(measured: Vec<Measured>) -> Vec<Row> {
    let mut rows: Vec<Row> = measured
        .into_iter()
        .filter_map(|m| {
            let rate = throughput(&m.raw)?;
            let ms: Vec<f64> = m
                .raw
                .iter()
                .filter(|r| r.span_ns > 0 && r.ops_per_thread.iter().sum::<u64>() > 0)
                .map(|r| {
                    let per_thread = r.ops_per_thread.iter().sum::<u64>() as f64 / r.ops_per_thread.len() as f64;
                    OPS_PER_THREAD_IN_TALK / per_thread * r.span_ns as f64 / 1e6
                })
                .collect();
            Some(Row {
                layout: m.layout,
                op: m.op,
                placement: m.placement,
                threads: m.threads,
                cpus: m.cpus,
                ops_per_sec: rate.ops_per_sec,
                ops_per_sec_per_thread: rate.ops_per_sec_per_thread,
                ms_per_10m_ops_per_thread: summarize(&ms)?,
                slowdown_vs_1_thread: None,
                slowdown_vs_padded: None,
                counts_verified: m.counts_verified,
                cpu_share: rate.cpu_share,
                raw: m.raw,
            })
        })
        .collect();
    let rates: Vec<(Config, Summary)> = rows.iter().map(|r| (Config::of(r), r.ops_per_sec_per_thread)).collect();
    let find = |config: Config| rates.iter().find(|(c, _)| *c == config).map(|(_, rate)| *rate);
    for row in &mut rows {
        let mine = row.ops_per_sec_per_thread;
        if row.threads > 1 {
            let one = Config {
                threads: 1,
                ..Config::of(row)
            };
            row.slowdown_vs_1_thread = find(one).and_then(|one| slowdown(&mine, &one));
        }
        if row.layout == Layout::Packed {
            let padded = Config {
                layout: Layout::Padded,
                ..Config::of(row)
            };
            row.slowdown_vs_padded = find(padded).and_then(|padded| slowdown(&mine, &padded));
        }
    }
    rows
}

/// The "what this means" lines.
pub fn meaning(rows: &[Row]) -> Vec<String> {
    let mut lines = Vec::new();
    let several_placements = rows.iter().any(|r| r.placement != rows[0].placement);
    let mut seen: Vec<(Op, Placement)> = Vec::new();
    for row in rows {
        if seen.contains(&(row.op, row.placement)) {
            continue;
        }
        seen.push((row.op, row.placement));
        let where_ = if several_placements {
            format!(", {} placement", row.placement)
        } else {
            String::new()
        };
        let packed = rows
            .iter()
            .filter(|r| r.op == row.op && r.placement == row.placement && r.threads >= 2)
            .filter(|r| r.slowdown_vs_padded.is_some())
            .max_by_key(|r| r.threads);
        let Some(packed) = packed else { continue };
        let Some(ratio) = packed.slowdown_vs_padded else {
            continue;
        };
        let what = match row.op {
            Op::Atomic => "atomic increments",
            Op::Store => "plain increments",
        };
        let head = format!(
            "{what} at {} threads{where_} (CPUs {})",
            packed.threads,
            list(&packed.cpus)
        );
        let padded = rows.iter().find(|r| {
            r.layout == Layout::Padded && r.op == row.op && r.placement == row.placement && r.threads == packed.threads
        });
        let padded_slowed = padded
            .and_then(|p| p.slowdown_vs_1_thread)
            .filter(Ratio::clearly_slower);
        lines.push(if ratio.clearly_slower() {
            format!(
                "{head}: packed counters were {} slower per thread than padded ones. No thread reads another's \
                 counter, so this is false sharing: the one line holding them all moves between cores on every \
                 write. Give each thread's hot data its own 128-byte block.",
                ratio.describe()
            )
        } else if ratio.clearly_faster() {
            format!(
                "{head}: packed counters were faster than padded ones ({} of padded's time per operation), so no \
                 false-sharing penalty showed here.",
                ratio.describe()
            )
        } else {
            format!(
                "{head}: no clear false-sharing penalty; packed took {} padded's time per operation, within the \
                 samples' spread.",
                ratio.describe()
            )
        });
        if let Some(alone) = padded_slowed {
            lines.push(format!(
                "Padded {what} also slowed {} per thread from 1 to {} threads, though they share no line: that \
                 part is not false sharing but something else the threads share (SMT siblings, a busy host, \
                 power limits).",
                alone.describe(),
                packed.threads
            ));
        }
    }
    if let Some(line) = talk_comparison(rows) {
        lines.push(line);
    }
    if lines.is_empty() {
        lines.push(
            "every run had one thread, so nothing could be shared; false sharing needs two or more threads \
             (--thread-sweep 1,2)"
                .to_string(),
        );
    }
    lines
}

/// Our packed atomic curve set beside the talk's 29.7 ms → 6,520 ms.
fn talk_comparison(rows: &[Row]) -> Option<String> {
    let packed = |threads: Option<usize>| {
        rows.iter()
            .filter(|r| r.layout == Layout::Packed && r.op == Op::Atomic && r.placement == rows[0].placement)
            .filter(|r| threads.is_none_or(|t| r.threads == t))
            .max_by_key(|r| r.threads)
    };
    let (one, most) = (packed(Some(1))?, packed(None)?);
    if most.threads < 2 {
        return None;
    }
    Some(format!(
        "On an 8-socket server, 10M read-modify-writes per thread on one line took {TALK_MS_1_THREAD} ms with 1 \
         thread and 6,520 ms with 80 ({}×); here they took {:.1} ms with 1 thread and {:.1} ms \
         with {} ({}×).",
        factor(TALK_MS_80_THREADS / TALK_MS_1_THREAD),
        one.ms_per_10m_ops_per_thread.median,
        most.ms_per_10m_ops_per_thread.median,
        most.threads,
        factor(most.ms_per_10m_ops_per_thread.median / one.ms_per_10m_ops_per_thread.median),
    ))
}

/// The placement's CPUs in thread order, as every list is written.
fn list(cpus: &[u32]) -> String {
    numasleuth_parse::human_list(cpus)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Samples of `ops` per thread in `ms` milliseconds each.
    fn measured(layout: Layout, threads: usize, ms: &[f64]) -> Measured {
        Measured {
            layout,
            op: Op::Atomic,
            placement: Placement::Compact,
            threads,
            cpus: (0..threads as u32).collect(),
            counts_verified: true,
            raw: ms
                .iter()
                .map(|ms| Raw {
                    span_ns: (ms * 1e6) as u64,
                    ops_per_thread: vec![1_000_000; threads],
                    cpu_ns_per_thread: vec![(ms * 1e6) as u64; threads],
                })
                .collect(),
        }
    }

    #[test]
    fn ten_million_ops_time_and_slowdowns() {
        let rows = rows(vec![
            measured(Layout::Packed, 1, &[3.0, 3.0, 3.0]),
            measured(Layout::Packed, 2, &[30.0, 33.0, 36.0]),
            measured(Layout::Padded, 1, &[3.0, 3.0, 3.0]),
            measured(Layout::Padded, 2, &[3.0, 3.1, 3.2]),
        ]);
        // 1M ops in 3 ms per thread → 10M in 30 ms.
        assert!((rows[0].ms_per_10m_ops_per_thread.median - 30.0).abs() < 1e-6);
        let vs_one = rows[1].slowdown_vs_1_thread.unwrap();
        assert!((vs_one.median - 11.0).abs() < 1e-6, "{vs_one:?}");
        let vs_padded = rows[1].slowdown_vs_padded.unwrap();
        assert!(vs_padded.clearly_slower(), "{vs_padded:?}");
        assert_eq!(rows[3].slowdown_vs_padded, None);
        let lines = meaning(&rows);
        assert!(
            lines[0]
                .starts_with("atomic increments at 2 threads (CPUs 0-1): packed counters were 11× (9.61–12) slower"),
            "{lines:?}"
        );
        assert!(lines[0].contains("false sharing"), "{lines:?}");
        assert!(
            lines[1].contains("here they took 30.0 ms with 1 thread and 330.0 ms with 2 (11×)"),
            "{lines:?}"
        );
    }

    #[test]
    fn padded_slowing_too_is_not_blamed_on_false_sharing() {
        let rows = rows(vec![
            measured(Layout::Packed, 1, &[3.0, 3.0, 3.0]),
            measured(Layout::Packed, 2, &[12.0, 12.5, 13.0]),
            measured(Layout::Padded, 1, &[3.0, 3.0, 3.0]),
            measured(Layout::Padded, 2, &[6.0, 6.2, 6.4]),
        ]);
        let lines = meaning(&rows);
        assert!(lines[0].contains("packed counters were 2.02×"), "{lines:?}");
        assert!(
            lines[1].starts_with("Padded atomic increments also slowed 2.07× (2.01–2.12) per thread"),
            "{lines:?}"
        );
    }

    #[test]
    fn no_penalty_is_said_plainly_and_one_thread_explains_itself() {
        let rows_even = rows(vec![
            measured(Layout::Packed, 2, &[3.0, 3.3, 2.9]),
            measured(Layout::Padded, 2, &[3.1, 3.0, 3.2]),
        ]);
        assert!(meaning(&rows_even)[0].contains("no clear false-sharing penalty"));
        let single = rows(vec![
            measured(Layout::Packed, 1, &[3.0]),
            measured(Layout::Padded, 1, &[3.0]),
        ]);
        assert!(meaning(&single)[0].starts_with("every run had one thread"));
    }
}
