//! `numasleuth memwatch`: the application layer's `memwatch` watches
//! (`numasleuth_app::memwatch`); this file prints each sample as it comes.

use std::process::ExitCode;

use anyhow::{bail, Context};
use numasleuth_analyze::memwatch::Sample;
use numasleuth_app::memwatch::{self, MemwatchObserver, MemwatchRequest, ObserverError, Step};
use numasleuth_kernel::Root;
use numasleuth_report::export::Format;
use numasleuth_report::memwatch_text::{
    first_record, header, render_sample, sample_json, summary_json, summary_text, MemwatchReport,
};
use numasleuth_report::provenance::Provenance;

use super::output::{Aliases, Plan};
use crate::cli::MemwatchArgs;
use crate::output;

pub fn run(root: &Root, args: &MemwatchArgs) -> anyhow::Result<ExitCode> {
    if !root.is_live() {
        return instant(root, args);
    }
    let outputs = args.output.plan::<MemwatchReport>(Aliases {
        json: args.json,
        svg: args.svg.as_deref(),
        ..Aliases::default()
    })?;
    let request = MemwatchRequest {
        interval: args.interval,
        duration: args.duration,
    };
    let stop = super::stop_signal::stop_on_signals();
    let mut out = Stream::new(root, &outputs);
    let watched = memwatch::run(root, &request, &stop, &mut out);
    // A print that failed (a closed pipe) ends the run as itself.
    if let Some(failed) = out.failed.take() {
        return Err(failed);
    }
    let watched = watched?;
    out.record(summary_json(watched.samples, watched.cost, &watched.span))?;
    out.text(&summary_text(watched.cost, &watched.span))?;
    out.provenance.run = Some(watched.span);
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
    super::output::emit(root, &outputs, &memwatch::instant(root)?)?;
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
    /// What ended the run from this side, kept whole for its exit status.
    failed: Option<anyhow::Error>,
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
            failed: None,
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

    fn keep(&mut self, done: anyhow::Result<()>) -> Result<(), ObserverError> {
        done.map_err(|error| {
            let said = error.to_string();
            self.failed = Some(error);
            said.into()
        })
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

impl MemwatchObserver for Stream<'_> {
    fn first(&mut self, sample: &Sample, request: &MemwatchRequest, page_bytes: u64) -> Result<(), ObserverError> {
        let printed = self.text(&header(
            sample.nodes.len(),
            request.interval,
            request.duration,
            page_bytes,
        ));
        self.sampled(sample);
        self.keep(printed)
    }

    fn step(&mut self, step: &Step<'_>, page_bytes: u64) -> Result<(), ObserverError> {
        let printed = self
            .text(&render_sample(&step.rows, &step.machine, &step.events, page_bytes))
            .and_then(|()| self.record(sample_json(&step.rows, &step.machine, &step.events)));
        self.sampled(step.sample);
        self.keep(printed)
    }
}
