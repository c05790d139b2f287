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
use numasleuth_report::export::Format;
use numasleuth_report::memwatch_text::{
    first_record, header, render_sample, sample_json, summary_json, summary_text, MemwatchReport,
};
use numasleuth_report::provenance::Provenance;

use super::output::{Aliases, Plan};
use crate::cli::MemwatchArgs;
use crate::output;

/// Caps memory: an hour at 100 ms is 36,000 samples.
const MAX_SAMPLES: u128 = 100_000;

pub fn run(root: &Root, args: &MemwatchArgs) -> anyhow::Result<ExitCode> {
    let outputs = args.output.plan::<MemwatchReport>(Aliases {
        json: args.json,
        svg: args.svg.as_deref(),
        ..Aliases::default()
    })?;
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
    let page_bytes = pages::base_page_bytes(root);
    let mut out = Stream::new(root, &outputs);
    out.text(&header(previous.nodes.len(), args.interval, args.duration, page_bytes))?;
    out.sampled(&previous);
    let mut cost = Vec::new();
    let mut tracker = EventTracker::new(page_bytes);
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
        out.text(&render_sample(&rows, &machine, &events, page_bytes))?;
        out.record(sample_json(&rows, &machine, &events))?;
        out.sampled(&current);
        previous = current;
    }
    cost.sort();
    let median_us = cost[cost.len() / 2].as_secs_f64() * 1e6;
    let max_us = cost.last().map_or(0.0, |d| d.as_secs_f64() * 1e6);
    let share = median_us / (args.interval.as_secs_f64() * 1e6) * 100.0;
    out.record(summary_json(cost.len(), median_us, max_us, share))?;
    out.text(&summary_text(median_us, max_us, share))?;
    out.finish()?;
    Ok(ExitCode::SUCCESS)
}

/// memwatch prints as it samples: text or JSON lines on stdout, provenance
/// first (its line, or inside the first record), and keeps only what the
/// `-o` files (or a chart on stdout) need for the end.
struct Stream<'a> {
    plan: &'a Plan,
    provenance: Provenance,
    report: MemwatchReport,
    keep_text: bool,
    keep_json: bool,
    keep_history: bool,
    first_record: bool,
}

impl<'a> Stream<'a> {
    fn new(root: &'a Root, plan: &'a Plan) -> Self {
        let wants = |f: Format| plan.files.iter().any(|(_, format)| *format == f);
        let provenance = super::provenance::read(root);
        Stream {
            plan,
            report: MemwatchReport::default(),
            keep_text: wants(Format::Text),
            keep_json: wants(Format::Json),
            keep_history: wants(Format::Svg) || plan.stdout == Format::Svg,
            first_record: true,
            provenance,
        }
    }

    fn text(&mut self, text: &str) -> anyhow::Result<()> {
        if self.keep_text {
            self.report.text.push_str(text);
        }
        if self.plan.stdout == Format::Text {
            if std::mem::take(&mut self.first_record) {
                output::print(&format!("{}\n", self.provenance.line()))?;
            }
            output::print(text)?;
        }
        Ok(())
    }

    fn record(&mut self, record: serde_json::Value) -> anyhow::Result<()> {
        if self.plan.stdout == Format::Json {
            let line = if std::mem::take(&mut self.first_record) {
                first_record(&record, &self.provenance)?
            } else {
                serde_json::to_string(&record)?
            };
            output::print_json(&format!("{line}\n"))?;
        }
        if self.keep_json {
            self.report.records.push(record);
        }
        Ok(())
    }

    fn sampled(&mut self, sample: &Sample) {
        if self.keep_history {
            self.report.history.push(sample.clone());
        }
    }

    /// The files, and a chart asked for on stdout.
    fn finish(self) -> anyhow::Result<()> {
        super::output::write_files(self.plan, &self.report, &self.provenance)?;
        if self.plan.stdout == Format::Svg {
            output::print(&numasleuth_report::export::render(
                &self.report,
                Format::Svg,
                &self.provenance,
                false,
            )?)?;
        }
        Ok(())
    }
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
