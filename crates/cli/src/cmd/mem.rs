//! `numasleuth mem`: node×node idle latency and bandwidth matrices (both by
//! default), and through `mem latency --sizes` and `mem loaded` the curves.
//!
//! Wiring only: the pipeline is `numasleuth_app::mem` (the plan checked
//! against the machine, working sets sized from the caches, raw samples
//! from `numasleuth-measure`, unsteady cells measured again, analysis'
//! summaries and judgements); this turns the arguments into its request,
//! draws its progress (`measure_plan::Bar`) and prints the document.

use std::process::ExitCode;

use numasleuth_app::mem::{MemMode as Mode, MemRequest};
use numasleuth_kernel::Root;
use numasleuth_measure::stream::Mix;
use numasleuth_measure::PageKind;
use numasleuth_report::measure_export::MemReport;

use super::measure_args::{MemArgs, MemMode, MemOptions, MixArg, PagesArg};
use super::measure_plan::{self, Bar};
use super::output::Aliases;

pub fn run(root: &Root, args: &MemArgs) -> anyhow::Result<ExitCode> {
    let options = &args.options;
    let outputs = options.output.plan::<MemReport>(Aliases {
        json: options.json,
        csv: options.csv,
        ..Aliases::default()
    })?;
    let machine = measure_plan::machine(root, "mem")?;
    let stop = super::stop_signal::stop_on_signals();
    let request = request(options, mode(args.mode.as_ref()));
    let (doc, span) = numasleuth_app::mem::run(machine, &request, &stop, &mut Bar::new())?;
    super::output::emit_run(root, &outputs, &MemReport(&doc), Some(span))?;
    Ok(ExitCode::SUCCESS)
}

/// What the subcommand asks: `latency` with `--sizes` is the sweep, and
/// without it the matrix (its `--node` names the sweep's node only).
fn mode(mode: Option<&MemMode>) -> Mode {
    match mode {
        None => Mode::Matrices,
        Some(MemMode::Latency(latency)) => match &latency.sizes {
            Some(sizes) => Mode::Sweep {
                sizes_bytes: sizes.0.clone(),
                node: latency.node,
            },
            None => Mode::Latency,
        },
        Some(MemMode::Bandwidth) => Mode::Bandwidth,
        Some(MemMode::Loaded(loaded)) => Mode::Loaded {
            delays_ns: loaded.delays.as_ref().map(|d| d.0.clone()),
            node: loaded.node,
        },
    }
}

fn request(options: &MemOptions, mode: Mode) -> MemRequest {
    MemRequest {
        mode,
        raw: options.raw,
        nodes: options.nodes.clone(),
        cpus: options.cpus.clone(),
        quick: options.quick,
        samples: options.samples,
        sample_ms: options.sample_ms,
        size_bytes: options.size,
        threads: options.threads,
        mix: mix(options.mix),
        pages: page_kind(options.pages),
    }
}

fn mix(arg: MixArg) -> Mix {
    match arg {
        MixArg::Read => Mix::Read,
        MixArg::TwoToOne => Mix::TwoReadsOneWrite,
        MixArg::OneToOne => Mix::OneReadOneWrite,
        MixArg::Write => Mix::Write,
    }
}

fn page_kind(pages: PagesArg) -> PageKind {
    match pages {
        PagesArg::Small => PageKind::Small,
        PagesArg::Thp => PageKind::Transparent,
        PagesArg::Huge => PageKind::HugeTlb,
    }
}
