//! `numasleuth mem`: node×node idle latency and bandwidth matrices (both by
//! default), and through `mem latency --sizes` and `mem loaded` the curves.
//!
//! This command wires layers only: the plan checks the request against the
//! machine, `numasleuth-measure` returns raw samples, `numasleuth-analyze`
//! summarises and judges them, and a reporter prints the document.

use std::process::ExitCode;

use anyhow::Context;
use numasleuth_analyze::interconnect::{judge, NodeMatrix};
use numasleuth_analyze::latency_check::CurveCheck;
use numasleuth_analyze::mem::placement_verdict;
use numasleuth_analyze::row_warnings::RowChecks;
use numasleuth_analyze::stats::Summary;
use numasleuth_analyze::timing::{RawBandwidth, RawLatency};
use numasleuth_analyze::working_set::WorkingSet;
use numasleuth_kernel::Root;
use numasleuth_measure::bandwidth::{self, BandwidthConfig};
use numasleuth_measure::latency::{ChaseBuffer, Sampling};
use numasleuth_measure::stream::Mix;
use numasleuth_model::stop::RunSpan;
use numasleuth_report::measure_export::MemReport;
use numasleuth_report::mem_json::{BandwidthMatrix, LatencyMatrix, MemDocument};

use super::measure_args::{MemArgs, MemMode, MemOptions, MixArg};
use super::measure_plan::{self, placement_check, Machine, Progress};
use super::output::Aliases;
use super::{measure_raw, mem_curves, mem_sizing};

/// Resolved knobs shared by every `mem` mode. Buffer sizes are not among
/// them: each measurement sizes its working set from the caches of the
/// CPUs it measures with (`mem_sizing`), unless `--size` gave one.
pub struct Settings {
    pub sampling: Sampling,
    /// `--size`: the chase buffer, or all bandwidth threads' buffers
    /// together.
    pub size: Option<usize>,
    pub pages: numasleuth_measure::PageKind,
}

impl Settings {
    fn new(options: &MemOptions) -> Self {
        let quick = options.quick;
        let samples = options.samples.map_or(if quick { 5 } else { 7 }, |n| n as usize);
        // --quick takes fewer and shorter samples; never a smaller working
        // set, which would measure cache instead of memory.
        let sample_ms = options.sample_ms.unwrap_or(if quick { 10 } else { 20 });
        Settings {
            sampling: Sampling {
                samples,
                sample_ns: sample_ms * 1_000_000,
            },
            size: options.size,
            pages: measure_plan::page_kind(options.pages),
        }
    }
}

pub fn mix(arg: MixArg) -> Mix {
    match arg {
        MixArg::Read => Mix::Read,
        MixArg::TwoToOne => Mix::TwoReadsOneWrite,
        MixArg::OneToOne => Mix::OneReadOneWrite,
        MixArg::Write => Mix::Write,
    }
}

/// The default `mem` job: both node×node matrices, placement verdict and
/// interconnect judgement, and how far it got (Ctrl-C ends it after the
/// cell under way). `doctor --measure` runs exactly this.
pub fn matrices(root: &Root, options: &MemOptions) -> anyhow::Result<(MemDocument, RunSpan)> {
    let machine = machine(root, options)?;
    let settings = Settings::new(options);
    let mut doc = document(options);
    let (initiators, targets) = machine.nodes(options.nodes.as_ref())?;
    let cells = (initiators.len() * targets.len() * 2) as u64;
    let mut progress = Progress::new(cells, "mem");
    latency_matrix(&machine, &settings, (&initiators, &targets), &mut doc, &mut progress)?;
    bandwidth_matrix(
        &machine,
        &settings,
        options,
        (&initiators, &targets),
        &mut doc,
        &mut progress,
    )?;
    progress.finish();
    finish(&machine, options, &mut doc);
    Ok((doc, progress.span("cells")))
}

/// The machine as `mem` may use it: its allowed CPUs, narrowed by `-C`.
fn machine(root: &Root, options: &MemOptions) -> anyhow::Result<Machine> {
    let mut machine = measure_plan::machine(root, "mem")?;
    machine.restrict_cpus(options.cpus.as_ref())?;
    Ok(machine)
}

fn document(options: &MemOptions) -> MemDocument {
    let mut doc = MemDocument::new();
    doc.raw = options.raw.then(Default::default);
    doc.page_kind = measure_plan::page_kind_name(options.pages).to_string();
    (doc.cycles_per_ns, doc.cycles_note) = measure_plan::cycles();
    doc
}

pub fn run(root: &Root, args: &MemArgs) -> anyhow::Result<ExitCode> {
    let options = &args.options;
    let outputs = options.output.plan::<MemReport>(Aliases {
        json: options.json,
        csv: options.csv,
        ..Aliases::default()
    })?;
    let (doc, span) = match &args.mode {
        None => matrices(root, options)?,
        Some(mode) => {
            let machine = machine(root, options)?;
            let settings = Settings::new(options);
            let mut doc = document(options);
            let span = match mode {
                MemMode::Latency(latency) => match &latency.sizes {
                    Some(sizes) => {
                        let cpus_given = options.cpus.is_some();
                        mem_curves::sweep(&machine, &settings, latency, &sizes.0, cpus_given, &mut doc)?
                    }
                    None => one_matrix(&machine, options, "mem latency", |nodes, progress| {
                        latency_matrix(&machine, &settings, nodes, &mut doc, progress)
                    })?,
                },
                MemMode::Bandwidth => one_matrix(&machine, options, "mem bandwidth", |nodes, progress| {
                    bandwidth_matrix(&machine, &settings, options, nodes, &mut doc, progress)
                })?,
                MemMode::Loaded(loaded) => mem_curves::loaded(&machine, &settings, loaded, &mut doc)?,
            };
            finish(&machine, options, &mut doc);
            (doc, span)
        }
    };
    super::output::emit_run(root, &outputs, &MemReport(&doc), Some(span))?;
    Ok(ExitCode::SUCCESS)
}

/// Placement verdict and the interconnect judgement, once all is measured.
fn finish(machine: &Machine, options: &MemOptions, doc: &mut MemDocument) {
    let (verified, warning) = placement_verdict(doc.placements.iter().map(|p| p.verified));
    doc.placement_verified = verified;
    doc.warnings.extend(warning.map(str::to_string));
    let as_matrix = |initiators: &[u32], targets: &[u32], cells: &[Vec<Option<_>>]| NodeMatrix {
        initiators: initiators.to_vec(),
        targets: targets.to_vec(),
        cells: cells.to_vec(),
    };
    let latency = doc
        .latency_ns
        .as_ref()
        .map(|m| as_matrix(&m.initiators, &m.nodes, &m.matrix));
    let bandwidth = doc
        .bandwidth_bytes_per_sec
        .as_ref()
        .map(|m| as_matrix(&m.initiators, &m.nodes, &m.matrix));
    doc.interconnect = judge(
        &machine.topo,
        latency.as_ref(),
        bandwidth.as_ref(),
        mix(options.mix).name(),
    );
}

/// `mem latency` or `mem bandwidth` alone: one matrix over the requested
/// nodes, with a progress line counting just its cells.
fn one_matrix(
    machine: &Machine,
    options: &MemOptions,
    label: &str,
    measure: impl FnOnce((&[u32], &[u32]), &mut Progress) -> anyhow::Result<()>,
) -> anyhow::Result<RunSpan> {
    let (initiators, targets) = machine.nodes(options.nodes.as_ref())?;
    let mut progress = Progress::new((initiators.len() * targets.len()) as u64, label);
    measure((&initiators, &targets), &mut progress)?;
    progress.finish();
    Ok(progress.span("cells"))
}

fn latency_matrix(
    machine: &Machine,
    settings: &Settings,
    (initiators, targets): (&[u32], &[u32]),
    doc: &mut MemDocument,
    progress: &mut Progress,
) -> anyhow::Result<()> {
    let cpus: Vec<u32> = initiators.iter().map(|&n| machine.cpus_of(n)[0]).collect();
    let set = mem_sizing::chase_set(machine, settings.size, &cpus, targets);
    doc.warnings.extend(set.notes.iter().cloned());
    let buffer_bytes = set.working_set_bytes as usize;
    for &target in targets {
        machine.check_fits(target, buffer_bytes, "the latency buffer")?;
    }
    let mut matrix = vec![vec![None; targets.len()]; initiators.len()];
    let mut checks = RowChecks::new("latency cells");
    'targets: for (t, &target) in targets.iter().enumerate() {
        if progress.stopped() {
            break;
        }
        // One buffer and one cycle per target, chased from every initiator.
        let buffer = ChaseBuffer::allocate(buffer_bytes, target, settings.pages, 0x5eed + u64::from(target))
            .with_context(|| format!("cannot set up the latency buffer on node {target}"))?;
        doc.placements.push(placement_check(
            format!("latency buffer on node {target}"),
            buffer.placement(),
        ));
        for (i, &initiator) in initiators.iter().enumerate() {
            if progress.stopped() {
                break 'targets;
            }
            progress.step(&format!("latency {initiator}→{target}"));
            let samples = buffer
                .measure(cpus[i], settings.sampling)
                .with_context(|| format!("latency from CPU {} to node {target}", cpus[i]))?;
            doc.timer_overhead_ns = Some(samples.timer_overhead_ns);
            let chase = measure_raw::chase(&samples);
            let summary = chase.summary();
            checks.add(format!("node {initiator} → node {target}"), &chase, summary.as_ref());
            matrix[i][t] = summary;
            if let Some(raw) = doc.raw.as_mut() {
                raw.latency.push(RawLatency {
                    cpu: cpus[i],
                    node: target,
                    size_bytes: samples.size_bytes,
                    chase,
                });
            }
        }
    }
    doc.warnings.extend(checks.warnings());
    let (self_check, self_check_skipped) = if progress.stopped() {
        (None, Some("stopped before the self-check".to_string()))
    } else {
        first_row_self_check(machine, settings, (&cpus, targets), (&set, &matrix), doc)
    };
    doc.latency_ns = Some(LatencyMatrix {
        nodes: targets.to_vec(),
        initiators: initiators.to_vec(),
        cpus,
        buffer_bytes,
        working_set: set,
        matrix,
        self_check,
        self_check_skipped,
    });
    Ok(())
}

/// The self-check of the latency figure: a chase at twice the working set
/// from the first row's CPU, to its own node when that is a column.
fn first_row_self_check(
    machine: &Machine,
    settings: &Settings,
    (cpus, targets): (&[u32], &[u32]),
    (set, matrix): (&WorkingSet, &[Vec<Option<Summary>>]),
    doc: &mut MemDocument,
) -> (Option<CurveCheck>, Option<String>) {
    let home = machine.topo.node_of_cpu(cpus[0]);
    let t = targets.iter().position(|&n| Some(n) == home).unwrap_or(0);
    let check = mem_sizing::self_check(
        machine,
        settings,
        (cpus[0], targets[t]),
        set,
        matrix[0][t].as_ref(),
        doc,
    );
    if let Some(c) = check.as_ref().ok().filter(|c| !c.flattened) {
        doc.warnings.push(c.message.clone());
    }
    match check {
        Ok(c) => (Some(c), None),
        Err(why) => (None, Some(why)),
    }
}

fn bandwidth_matrix(
    machine: &Machine,
    settings: &Settings,
    options: &MemOptions,
    (initiators, targets): (&[u32], &[u32]),
    doc: &mut MemDocument,
    progress: &mut Progress,
) -> anyhow::Result<()> {
    if progress.stopped() {
        return Ok(());
    }
    let mix = mix(options.mix);
    let cpus_by_row = bandwidth_cpus(machine, initiators, options.threads)?;
    let set = mem_sizing::threads_set(machine, settings.size, &cpus_by_row, targets, 0);
    doc.warnings.extend(set.notes.iter().cloned());
    let total_bytes = set.working_set_bytes as usize;
    for &target in targets {
        machine.check_fits(target, total_bytes, "the bandwidth buffers")?;
    }
    let mut matrix = vec![vec![None; targets.len()]; initiators.len()];
    let mut checks = RowChecks::new("bandwidth cells");
    let (mut per_thread, mut non_temporal) = (0, false);
    'rows: for (i, &initiator) in initiators.iter().enumerate() {
        for (t, &target) in targets.iter().enumerate() {
            if progress.stopped() {
                break 'rows;
            }
            progress.step(&format!("bandwidth {initiator}→{target}"));
            let config = BandwidthConfig {
                mix,
                cpus: cpus_by_row[i].clone(),
                node: target,
                total_bytes,
                pages: settings.pages,
                sampling: settings.sampling,
            };
            let samples = bandwidth::measure(&config)
                .with_context(|| format!("bandwidth from node {initiator} to node {target}"))?;
            for (k, placement) in samples.placements.iter().enumerate() {
                let what = format!("bandwidth buffer {k} of node {initiator} → node {target}");
                doc.placements.push(placement_check(what, placement));
            }
            (per_thread, non_temporal) = (samples.buffer_bytes_per_thread, samples.non_temporal_stores);
            let rates = measure_raw::bandwidth(&samples);
            let summary = rates.summary();
            checks.add_summary(format!("node {initiator} → node {target}"), summary.as_ref());
            matrix[i][t] = summary;
            if let Some(raw) = doc.raw.as_mut() {
                raw.bandwidth.push(RawBandwidth {
                    cpus: samples.cpus.clone(),
                    node: target,
                    samples: rates,
                });
            }
        }
    }
    doc.warnings.extend(checks.warnings());
    doc.bandwidth_bytes_per_sec = Some(BandwidthMatrix {
        nodes: targets.to_vec(),
        initiators: initiators.to_vec(),
        cpus: cpus_by_row,
        mix: mix.name(),
        non_temporal_stores: non_temporal,
        buffer_bytes_per_thread: per_thread,
        working_set: set,
        matrix,
    });
    Ok(())
}

/// The CPUs whose threads make each initiator node's bandwidth: all it
/// may use, or the first `--threads` of them.
fn bandwidth_cpus(machine: &Machine, initiators: &[u32], threads: Option<u32>) -> anyhow::Result<Vec<Vec<u32>>> {
    let mut cpus_by_row = Vec::new();
    for &initiator in initiators {
        let mut cpus = machine.cpus_of(initiator);
        if let Some(threads) = threads {
            if threads as usize > cpus.len() {
                anyhow::bail!(
                    "--threads {threads} is more than the {} CPU{} of node {initiator} this process may use ({}); \
                     threads sharing a CPU would measure the scheduler, not memory",
                    cpus.len(),
                    if cpus.len() == 1 { "" } else { "s" },
                    numasleuth_kernel::human_list(&cpus)
                );
            }
            cpus.truncate(threads as usize);
        }
        cpus_by_row.push(cpus);
    }
    Ok(cpus_by_row)
}
