//! `numasleuth mem`: node×node idle latency and bandwidth matrices (both by
//! default), and through `mem latency --sizes` and `mem loaded` the curves.
//!
//! This command wires layers only: the plan checks the request against the
//! machine, `numasleuth-measure` returns raw samples, `numasleuth-analyze`
//! summarises and judges them, and a reporter prints the document.

use std::process::ExitCode;

use numasleuth_analyze::interconnect::{judge, NodeMatrix};
use numasleuth_analyze::latency_check::{CurveCheck, PROBE_FACTOR};
use numasleuth_analyze::mem::{bandwidth_grid, latency_grid, placement_verdict, NodeGrid};
use numasleuth_analyze::stats::Summary;
use numasleuth_analyze::timing::{RawBandwidth, RawLatency};
use numasleuth_analyze::working_set::WorkingSet;
use numasleuth_kernel::Root;
use numasleuth_measure::bandwidth::BandwidthSamples;
use numasleuth_measure::latency::Sampling;
use numasleuth_measure::mem_grids::{self, Cell, ChaseCells, ChasePlan, StreamPlan};
use numasleuth_measure::steps::{PhaseError, StepError};
use numasleuth_measure::stream::Mix;
use numasleuth_model::stop::RunSpan;
use numasleuth_report::measure_export::MemReport;
use numasleuth_report::mem_json::{BandwidthMatrix, LatencyMatrix, MemDocument};

use super::measure_args::{MemArgs, MemMode, MemOptions, MixArg};
use super::measure_plan::{self, placement_check, step_error, Machine, Progress};
use super::output::Aliases;
use super::{measure_raw, mem_again, mem_curves, mem_sizing};

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
    numasleuth_analyze::working_set::merge_warnings(&mut doc.warnings);
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
    let mut set = mem_sizing::chase_set(machine, settings.size, &cpus, targets);
    doc.warnings.extend(set.notes.iter().cloned());
    let home = home_column(machine, &cpus, targets);
    let search = mem_sizing::grow_until_flat(machine, settings, (cpus[0], targets[home]), targets, &mut set, doc);
    let buffer_bytes = set.working_set_bytes as usize;
    for &target in targets {
        machine.check_fits(target, buffer_bytes, "the latency buffer")?;
    }
    let plan = ChasePlan {
        cpus: &cpus,
        targets,
        buffer_bytes,
        pages: settings.pages,
        sampling: settings.sampling,
    };
    let mut done = mem_grids::latency_cells(plan, &progress.stop_token(), &mut |c| {
        progress.step(&format!("latency {}→{}", initiators[c.row], targets[c.column]));
    })
    .map_err(|e| chase_error(e, &cpus, targets))?;
    let again = mem_again::latency(plan, (initiators, targets), &mut done, progress);
    doc.measured_again
        .extend(again.map_err(|e| chase_error(e, &cpus, targets))?);
    let matrix = record_chases(doc, (initiators, targets, &cpus), &done);
    let (self_check, self_check_skipped) = if progress.stopped() {
        (None, Some("stopped before the self-check".to_string()))
    } else {
        let probe = search.as_ref().ok().and_then(|found| found.probe.as_ref());
        first_row_self_check(machine, settings, (cpus[0], targets, home), (&set, &matrix), probe, doc)
    };
    let (size_search, size_search_note) = match search {
        Ok(found) => (found.checks, found.stopped),
        Err(why) => (Vec::new(), Some(why)),
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
        size_search,
        size_search_note,
    });
    Ok(())
}

/// A failed latency cell as a one-line error: setting up its column's
/// buffer, or chasing it from its row's CPU.
fn chase_error(failed: StepError<Cell, PhaseError>, cpus: &[u32], targets: &[u32]) -> anyhow::Error {
    let (cpu, target) = (cpus[failed.step.row], targets[failed.step.column]);
    match failed.error {
        PhaseError::Setup(cause) => {
            anyhow::Error::new(cause).context(format!("cannot set up the latency buffer on node {target}"))
        }
        PhaseError::Run(cause) => anyhow::Error::new(cause).context(format!("latency from CPU {cpu} to node {target}")),
    }
}

/// What the latency cells chased add to the document (buffer placements,
/// the clock's overhead, warnings, raw samples), and their matrix.
fn record_chases(
    doc: &mut MemDocument,
    (initiators, targets, cpus): (&[u32], &[u32], &[u32]),
    done: &ChaseCells,
) -> NodeGrid {
    doc.placements.extend(
        done.buffers.iter().map(|(column, placement)| {
            placement_check(format!("latency buffer on node {}", targets[*column]), placement)
        }),
    );
    if let Some((_, last)) = done.cells.last() {
        doc.timer_overhead_ns = Some(last.timer_overhead_ns);
    }
    let chases: Vec<_> = done.cells.iter().map(|(_, s)| measure_raw::chase(s)).collect();
    let (matrix, warnings) = latency_grid(
        (initiators.len(), targets.len()),
        done.cells.iter().zip(&chases).map(|((c, _), chase)| {
            let name = format!("node {} → node {}", initiators[c.row], targets[c.column]);
            ((c.row, c.column), name, chase)
        }),
    );
    if let Some(raw) = doc.raw.as_mut() {
        raw.latency
            .extend(done.cells.iter().zip(chases).map(|((c, samples), chase)| RawLatency {
                cpu: cpus[c.row],
                node: targets[c.column],
                size_bytes: samples.size_bytes,
                chase,
            }));
    }
    doc.warnings.extend(warnings);
    matrix
}

/// The column of the first row's own node, or the first column when its
/// node is not measured: where the size search and the self-check chase.
fn home_column(machine: &Machine, cpus: &[u32], targets: &[u32]) -> usize {
    let home = machine.topo.node_of_cpu(cpus[0]);
    targets.iter().position(|&n| Some(n) == home).unwrap_or(0)
}

/// The self-check of the latency figure: a chase at twice the working set
/// from the first row's CPU to column `t` (`home_column`), or the size
/// search's chase at that size when there is one.
fn first_row_self_check(
    machine: &Machine,
    settings: &Settings,
    (cpu, targets, t): (u32, &[u32], usize),
    (set, matrix): (&WorkingSet, &[Vec<Option<Summary>>]),
    probe: Option<&(u64, Summary)>,
    doc: &mut MemDocument,
) -> (Option<CurveCheck>, Option<String>) {
    if settings.size.is_some() {
        // Said before it runs: twice a large --size is a large allocation.
        say!(
            "numasleuth: self-check: a chase over {} ({PROBE_FACTOR}× --size) from CPU {cpu} to node {}",
            numasleuth_model::units::bytes(set.working_set_bytes.saturating_mul(PROBE_FACTOR)),
            targets[t]
        );
    }
    let check = mem_sizing::self_check(
        machine,
        settings,
        (cpu, targets[t]),
        (set, probe),
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
    // Stopped during the latency matrix: no bandwidth matrix at all.
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
    let plan = StreamPlan {
        cpus_by_row: &cpus_by_row,
        targets,
        mix,
        total_bytes,
        pages: settings.pages,
        sampling: settings.sampling,
    };
    let cell_name = |c: &Cell| (initiators[c.row], targets[c.column]);
    let failed = |e| {
        step_error(e, |c| {
            let (initiator, target) = cell_name(c);
            format!("bandwidth from node {initiator} to node {target}")
        })
    };
    let mut done = mem_grids::bandwidth_cells(plan, &progress.stop_token(), &mut |c| {
        let (initiator, target) = cell_name(c);
        progress.step(&format!("bandwidth {initiator}→{target}"));
    })
    .map_err(failed)?;
    let again = mem_again::bandwidth(plan, (initiators, targets), &mut done, progress);
    doc.measured_again.extend(again.map_err(failed)?);
    let (per_thread, non_temporal) = done
        .last()
        .map_or((0, false), |(_, s)| (s.buffer_bytes_per_thread, s.non_temporal_stores));
    let matrix = record_streams(doc, (initiators, targets), &done);
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

/// What the bandwidth cells streamed add to the document (each thread's
/// buffer placement, warnings, raw samples), and their matrix.
fn record_streams(
    doc: &mut MemDocument,
    (initiators, targets): (&[u32], &[u32]),
    done: &[(Cell, BandwidthSamples)],
) -> NodeGrid {
    let cell_name = |c: &Cell| (initiators[c.row], targets[c.column]);
    for (c, samples) in done {
        let (initiator, target) = cell_name(c);
        doc.placements
            .extend(samples.placements.iter().enumerate().map(|(k, placement)| {
                placement_check(
                    format!("bandwidth buffer {k} of node {initiator} → node {target}"),
                    placement,
                )
            }));
    }
    let rates: Vec<_> = done.iter().map(|(_, s)| measure_raw::bandwidth(s)).collect();
    let (matrix, warnings) = bandwidth_grid(
        (initiators.len(), targets.len()),
        done.iter().zip(&rates).map(|((c, _), rates)| {
            let (initiator, target) = cell_name(c);
            ((c.row, c.column), format!("node {initiator} → node {target}"), rates)
        }),
    );
    if let Some(raw) = doc.raw.as_mut() {
        raw.bandwidth
            .extend(done.iter().zip(rates).map(|((c, samples), rates)| RawBandwidth {
                cpus: samples.cpus.clone(),
                node: targets[c.column],
                samples: rates,
            }));
    }
    doc.warnings.extend(warnings);
    matrix
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
