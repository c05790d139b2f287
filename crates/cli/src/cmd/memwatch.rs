//! `numasleuth memwatch`: samples /proc/zoneinfo, /proc/vmstat and each
//! node's numastat on a fixed schedule and prints rates and watermark
//! events as they happen. It reads nothing that takes allocator locks (no
//! /proc/slabinfo), bounds its sample count, and measures its own cost.

use std::collections::BTreeMap;
use std::process::ExitCode;
use std::time::Instant;

use anyhow::{bail, Context};
use numasleuth_analyze::memwatch::{events, node_samples, reclaim_counters, rows, Event, Row, Sample};
use numasleuth_kernel::procfs::{settings, zoneinfo};
use numasleuth_kernel::sysfs::node::{parse_counters, NODE_DIR};
use numasleuth_kernel::{ReadError, Root};
use numasleuth_report::svg_chart::{line_chart, Series};
use serde_json::json;

use crate::cli::MemwatchArgs;
use crate::output;

/// Caps memory: an hour at 100 ms is 36,000 samples.
const MAX_SAMPLES: u128 = 100_000;

pub fn run(root: &Root, args: &MemwatchArgs) -> anyhow::Result<ExitCode> {
    // The parser bounds --interval (100ms to 1h) and --duration (7 days).
    let count = args.duration.as_nanos() / args.interval.as_nanos();
    if count == 0 {
        bail!(
            "--duration {:?} is shorter than --interval {:?}",
            args.duration,
            args.interval
        );
    }
    if count > MAX_SAMPLES {
        bail!("{count} samples requested; at most {MAX_SAMPLES} (raise --interval or lower --duration)");
    }
    let start = Instant::now();
    let mut previous = sample(root, 0.0).context("cannot take the first memwatch sample")?;
    let mut history = vec![previous.clone()];
    let mut cost = Vec::new();
    if !args.json {
        output::print(&format!(
            "watching {} node(s) every {:?} for {:?}; pages are the kernel's base pages\n",
            previous.nodes.len(),
            args.interval,
            args.duration
        ))?;
    }
    for i in 1..=count {
        // Bounded by MAX_SAMPLES and the parser's limits, so neither the
        // product nor the sum can overflow; checked all the same.
        let due = u32::try_from(i)
            .ok()
            .and_then(|i| args.interval.checked_mul(i))
            .and_then(|offset| start.checked_add(offset))
            .context("memwatch schedule out of range")?;
        std::thread::sleep(due.saturating_duration_since(Instant::now()));
        let began = Instant::now();
        let current = sample(root, start.elapsed().as_secs_f64())?;
        cost.push(began.elapsed());
        let (rows, events) = (rows(&previous, &current), events(&previous, &current));
        emit(args.json, &rows, &events)?;
        if args.svg.is_some() {
            history.push(current.clone());
        }
        previous = current;
    }
    cost.sort();
    let median_us = cost[cost.len() / 2].as_secs_f64() * 1e6;
    let max_us = cost.last().map_or(0.0, |d| d.as_secs_f64() * 1e6);
    let share = median_us / (args.interval.as_secs_f64() * 1e6) * 100.0;
    if args.json {
        output::print(&format!(
            "{}\n",
            json!({"schema": "numasleuth.memwatch/1", "type": "summary", "samples": cost.len(),
                   "sampling_cost_us": {"median": median_us, "max": max_us}, "cost_share_of_interval_percent": share})
        ))?;
    } else {
        output::print(&format!(
            "sampling cost: median {median_us:.0} µs, max {max_us:.0} µs per sample ({share:.3}% of the interval)\n"
        ))?;
    }
    if let Some(path) = &args.svg {
        std::fs::write(path, chart(&history)).with_context(|| format!("cannot write {}", path.display()))?;
        eprintln!("numasleuth: wrote {}", path.display());
    }
    Ok(ExitCode::SUCCESS)
}

fn sample(root: &Root, t_s: f64) -> Result<Sample, ReadError> {
    let zones = zoneinfo::read(root)?;
    let mut numastat = BTreeMap::new();
    for node in zones.iter().map(|z| z.node).collect::<std::collections::BTreeSet<_>>() {
        let path = format!("{NODE_DIR}/node{node}/numastat");
        if let Some(text) = root.read_optional(&path)? {
            numastat.insert(
                node,
                parse_counters(&text).map_err(|e| ReadError::malformed(&path, e.0))?,
            );
        }
    }
    let (pgscan_kswapd, pgscan_direct, allocstall) = reclaim_counters(&settings::read_vmstat(root)?);
    Ok(Sample {
        t_s,
        nodes: node_samples(&zones, &numastat),
        pgscan_kswapd,
        pgscan_direct,
        allocstall,
    })
}

fn emit(json: bool, rows: &[Row], events: &[Event]) -> anyhow::Result<()> {
    if json {
        let line = json!({"schema": "numasleuth.memwatch/1", "type": "sample",
                          "t_s": rows.first().map_or(0.0, |r| r.t_s), "nodes": rows, "events": events});
        return output::print(&format!("{line}\n"));
    }
    let mut text = String::new();
    let rate = |r: Option<f64>| r.map_or("?".to_string(), |v| format!("{v:.0}"));
    for r in rows {
        text.push_str(&format!(
            "t={:>7.1}s node {}: free {} pages (low {}, min {}), kswapd scan {:.0}/s, direct scan {:.0}/s, \
             numa_miss {}/s, numa_foreign {}/s\n",
            r.t_s,
            r.node,
            r.free_pages,
            r.low_pages,
            r.min_pages,
            r.kswapd_scan_per_sec,
            r.direct_scan_per_sec,
            rate(r.numa_miss_per_sec),
            rate(r.numa_foreign_per_sec)
        ));
    }
    for e in events {
        text.push_str(&format!("event: {}\n", e.message));
    }
    output::print(&text)
}

fn chart(history: &[Sample]) -> String {
    let mut series = Vec::new();
    let nodes: Vec<u32> = history
        .first()
        .map(|s| s.nodes.iter().map(|n| n.node).collect())
        .unwrap_or_default();
    for node in nodes {
        let points = |pick: fn(&numasleuth_analyze::memwatch::NodeSample) -> u64| -> Vec<(f64, f64)> {
            history
                .iter()
                .filter_map(|s| s.nodes.iter().find(|n| n.node == node).map(|n| (s.t_s, pick(n) as f64)))
                .collect()
        };
        series.push(Series {
            name: format!("node {node} free"),
            points: points(|n| n.free_pages),
            dashed: false,
        });
        series.push(Series {
            name: format!("node {node} low"),
            points: points(|n| n.low_pages),
            dashed: true,
        });
        series.push(Series {
            name: format!("node {node} min"),
            points: points(|n| n.min_pages),
            dashed: true,
        });
    }
    line_chart("free pages against watermarks", "time (s)", "pages", &series)
}
