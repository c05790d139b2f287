//! `numasleuth memwatch`: samples /proc/zoneinfo, /proc/vmstat and each
//! node's numastat on a fixed schedule and prints rates and watermark
//! events as they happen. It reads nothing that takes allocator locks (no
//! /proc/slabinfo), bounds its sample count, and measures its own cost.
//!
//! Wiring: the schedule is `probe::memory_signals::follow`, the rates and
//! events analyze's; this file prints each sample as it comes.

use std::process::ExitCode;
use std::time::Instant;

use anyhow::{bail, Context};
use numasleuth_analyze::memwatch::{cost_of, machine_row, rows, EventTracker, Sample};
use numasleuth_kernel::{pages, Root};
use numasleuth_model::stop::RunSpan;
use numasleuth_probe::memory_signals::{follow, watch_sample, Schedule};
use numasleuth_report::export::Format;
use numasleuth_report::memwatch_text::{
    first_record, header, render_sample, sample_json, summary_json, summary_text, InstantReport, MemwatchReport,
};
use numasleuth_report::provenance::Provenance;

use super::output::{Aliases, Plan};
use crate::cli::MemwatchArgs;
use crate::output;

/// Caps memory: an hour at 100 ms is 36,000 samples.
const MAX_SAMPLES: u128 = 100_000;

pub fn run(root: &Root, args: &MemwatchArgs) -> anyhow::Result<ExitCode> {
    if !root.is_live() {
        return instant(root, args);
    }
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
    let stop = super::stop_signal::stop_on_signals();
    let start = Instant::now();
    let first = watch_sample(root, 0.0).context("cannot take the first memwatch sample")?;
    let page_bytes = pages::page_size_bytes();
    let mut out = Stream::new(root, &outputs);
    out.text(&header(first.nodes.len(), args.interval, args.duration, page_bytes))?;
    out.sampled(&first);
    let mut tracker = EventTracker::new(page_bytes);
    let schedule = Schedule {
        start,
        interval: args.interval,
        count,
    };
    let cost = follow(
        root,
        first,
        schedule,
        &stop,
        |previous, current| -> anyhow::Result<()> {
            let (rows, machine) = (rows(previous, current), machine_row(previous, current));
            let events = tracker.events(previous, current);
            out.text(&render_sample(&rows, &machine, &events, page_bytes))?;
            out.record(sample_json(&rows, &machine, &events))?;
            out.sampled(current);
            Ok(())
        },
    )?;
    let span = RunSpan::timed(start, Some(args.duration), &stop);
    let cost_summary = cost_of(&cost, args.interval.as_secs_f64() * 1e6);
    out.record(summary_json(cost.len(), cost_summary, &span))?;
    out.text(&summary_text(cost_summary, &span))?;
    out.provenance.run = Some(span);
    out.finish()?;
    Ok(ExitCode::SUCCESS)
}

/// `memwatch --root`: a snapshot holds one moment, so that moment is shown
/// at once, without rates, and nothing is waited for.
fn instant(root: &Root, args: &MemwatchArgs) -> anyhow::Result<ExitCode> {
    if args.svg.is_some() {
        bail!("--svg: a snapshot (--root) holds one instant, which is no time series to chart");
    }
    let outputs = args
        .output
        .plan_text_json(args.json)
        .context("a snapshot (--root) holds one instant, shown as text or JSON")?;
    let report = InstantReport {
        sample: watch_sample(root, 0.0).context("cannot read the snapshot's memory state")?,
        page_bytes: pages::base_page_bytes(root),
    };
    super::output::emit(root, &outputs, &report)?;
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
            // Printed as it comes, so wrapped here rather than by the exporter.
            let layout = output::stdout_layout(false);
            if std::mem::take(&mut self.first_record) {
                output::print(&layout.wrap(&format!("{}\n", self.provenance.line())))?;
            }
            output::print(&layout.wrap(text))?;
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

    /// A chart asked for on stdout, then the files (a file that fails
    /// must not cost the chart).
    fn finish(self) -> anyhow::Result<()> {
        let mut printed = Ok(());
        if self.plan.stdout == Format::Svg {
            printed = output::print(&numasleuth_report::export::render(
                &self.report,
                Format::Svg,
                &self.provenance,
                &numasleuth_report::layout::TextLayout::default(),
            )?);
        }
        super::output::write_files(self.plan, &self.report, &self.provenance)?;
        printed
    }
}
