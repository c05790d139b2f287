//! `numasleuth memwatch`: samples /proc/zoneinfo, /proc/vmstat and each
//! node's numastat on a fixed schedule and prints rates and watermark
//! events as they happen. It reads nothing that takes allocator locks (no
//! /proc/slabinfo), bounds its sample count, and measures its own cost.

use std::collections::BTreeSet;
use std::process::ExitCode;
use std::time::Instant;

use anyhow::{bail, Context};
use numasleuth_analyze::memwatch::{machine_counters, machine_row, node_samples, rows, EventTracker, Sample};
use numasleuth_kernel::procfs::{settings, zoneinfo};
use numasleuth_kernel::sysfs::node;
use numasleuth_kernel::{pages, ReadError, Root};
use numasleuth_report::memwatch_text::{chart, render_sample, sample_json, SCHEMA};
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
            "--duration {} ms is shorter than --interval {} ms",
            args.duration.as_millis(),
            args.interval.as_millis()
        );
    }
    if count > MAX_SAMPLES {
        bail!("{count} samples requested; at most {MAX_SAMPLES} (raise --interval or lower --duration)");
    }
    let start = Instant::now();
    let mut previous = sample(root, 0.0).context("cannot take the first memwatch sample")?;
    let mut history = vec![previous.clone()];
    let mut cost = Vec::new();
    let page_bytes = pages::base_page_bytes(root);
    let mut tracker = EventTracker::new(page_bytes);
    if !args.json {
        output::print(&format!(
            "watching {} node(s) every {} ms for {} ms; pages are the kernel's base pages of {}\n",
            previous.nodes.len(),
            args.interval.as_millis(),
            args.duration.as_millis(),
            numasleuth_report::format::bytes(page_bytes)
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
        let (rows, machine) = (rows(&previous, &current), machine_row(&previous, &current));
        let events = tracker.events(&previous, &current);
        if args.json {
            output::print(&format!("{}\n", sample_json(&rows, &machine, &events)))?;
        } else {
            output::print(&render_sample(&rows, &machine, &events, page_bytes))?;
        }
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
            json!({"schema": SCHEMA, "type": "summary", "samples": cost.len(),
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

/// One memwatch sample: zoneinfo, each node's numastat and vmstat, and
/// /proc/vmstat. Only cheap files; never /proc/slabinfo.
pub fn sample(root: &Root, t_s: f64) -> Result<Sample, ReadError> {
    let zones = zoneinfo::read(root)?;
    let nodes: BTreeSet<u32> = zones.iter().map(|z| z.node).collect();
    let numastat = node::read_counters(root, nodes.iter().copied(), "numastat")?;
    let node_vmstat = node::read_counters(root, nodes, "vmstat")?;
    Ok(Sample {
        t_s,
        nodes: node_samples(&zones, &numastat, &node_vmstat),
        machine: machine_counters(&settings::read_vmstat(root)?),
        zone_reclaim_mode: settings::read_zone_reclaim_mode(root)?,
    })
}
