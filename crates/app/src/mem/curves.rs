//! The two curves of `mem`: latency against buffer size (`mem latency
//! --sizes`), where the cache levels show as steps, and latency against
//! load (`mem loaded`).

use std::time::Instant;

use numasleuth_analyze::mem_document::{Loaded, LoadedPoint, MemDocument, Sweep, SweepPoint};
use numasleuth_analyze::row_warnings::timed_rows;
use numasleuth_analyze::timing::{RawLatency, RawLoaded};
use numasleuth_measure::grids::{self, SweepPlan};
use numasleuth_measure::loaded::{self, LoadedConfig};
use numasleuth_measure::steps::PhaseError;
use numasleuth_model::stop::{RunSpan, Stop};
use numasleuth_model::units::bytes as size_name;

use super::{sizing, MemError, Settings};
use crate::machine::Machine;
use crate::measured::{self, placement_check};
use crate::steps::Steps;

/// Delays between 4 KiB reads, from flat out to a trickle.
pub const DEFAULT_DELAYS_NS: [u64; 9] = [0, 100, 200, 400, 800, 1600, 3200, 6400, 12800];

/// The chasing CPU (the first of `-C`, or of the allowed CPUs; `machine`
/// is already narrowed to `-C`) and the memory node.
fn cpu_and_node(machine: &Machine, node: Option<u32>) -> Result<(u32, u32), MemError> {
    let cpu = machine.allowed_cpus.ids()[0];
    let node = match node {
        Some(node) => node,
        None => machine.cpu_home_node(cpu)?,
    };
    machine.check_node(node)?;
    Ok((cpu, node))
}

/// Latency against buffer size (`mem latency --sizes`), one chase per
/// size from one CPU to one node, where the cache levels show as steps.
pub(super) fn sweep(
    machine: &Machine,
    settings: &Settings,
    (sizes, node): (&[usize], Option<u32>),
    cpus_given: bool,
    doc: &mut MemDocument,
    steps: &mut Steps,
) -> Result<RunSpan, MemError> {
    let (cpu, node) = cpu_and_node(machine, node)?;
    if machine.allowed_cpus.len() > 1 && cpus_given {
        doc.warnings.push(format!(
            "the sweep chases from one CPU, the first of -C ({}): CPU {cpu}",
            machine.allowed_cpus.to_human()
        ));
    }
    for &size in sizes {
        machine.check_fits(node, size, &format!("the {} buffer", size_name(size as u64)))?;
    }
    let plan = SweepPlan {
        cpu,
        node,
        pages: settings.pages,
        sampling: settings.sampling,
    };
    let stop = steps.stop_token();
    let done = grids::latency_sizes(plan, sizes, &stop, &mut |&size| {
        steps.step(&size_name(size as u64));
    })
    .map_err(|e| match e.error {
        PhaseError::Setup(cause) => MemError::SweepBuffer {
            size: size_name(e.step as u64),
            node,
            cause,
        },
        PhaseError::Run(cause) => MemError::Sweep(cause),
    })?;
    steps.finish();
    let chases: Vec<_> = done.iter().map(|(_, s)| measured::chase(&s.samples)).collect();
    let (summaries, warnings) = timed_rows("sizes", done.iter().map(|d| size_name(d.0 as u64)).zip(&chases));
    doc.placements.extend(done.iter().map(|(size, s)| {
        placement_check(
            format!("{} buffer on node {node}", size_name(*size as u64)),
            &s.placement,
        )
    }));
    if let Some((_, last)) = done.last() {
        doc.timer_overhead_ns = Some(last.samples.timer_overhead_ns);
    }
    let points = done
        .iter()
        .zip(summaries)
        .map(|((size, _), latency_ns)| SweepPoint {
            size_bytes: *size,
            latency_ns,
        })
        .collect();
    if let Some(raw) = doc.raw.as_mut() {
        raw.latency
            .extend(done.iter().zip(chases).map(|((size, _), chase)| RawLatency {
                cpu,
                node,
                size_bytes: *size,
                chase,
            }));
    }
    doc.warnings.extend(warnings);
    doc.latency_sweep = Some(Sweep { cpu, node, points });
    Ok(steps.span("sizes"))
}

/// Latency against load (`mem loaded`): one CPU chases while the node's
/// other allowed CPUs read at each delay in turn.
pub(super) fn loaded(
    machine: &Machine,
    settings: &Settings,
    (delays_ns, node): (Option<&[u64]>, Option<u32>),
    stop: &Stop,
    doc: &mut MemDocument,
) -> Result<RunSpan, MemError> {
    let (cpu, node) = cpu_and_node(machine, node)?;
    let home = machine.cpu_home_node(cpu)?;
    let load_cpus: Vec<u32> = machine.cpus_of(home).into_iter().filter(|&c| c != cpu).collect();
    if load_cpus.is_empty() {
        return Err(MemError::NoLoadCpu { home, cpu });
    }
    let delays = delays_ns.map_or_else(|| DEFAULT_DELAYS_NS.to_vec(), <[u64]>::to_vec);
    let (chase_set, load_set) = sizing::loaded_sets(machine, settings.size, cpu, &load_cpus, node);
    doc.warnings
        .extend(chase_set.notes.iter().chain(&load_set.notes).cloned());
    let latency_bytes = chase_set.working_set_bytes as usize;
    let per_thread = (load_set.working_set_bytes as usize / load_cpus.len()).max(1 << 20);
    machine.check_fits(
        node,
        latency_bytes + per_thread * load_cpus.len(),
        "loaded latency's buffers",
    )?;
    let config = LoadedConfig {
        latency_cpu: cpu,
        load_cpus: load_cpus.clone(),
        node,
        latency_bytes,
        load_bytes_per_thread: per_thread,
        delays_ns: delays,
        pages: settings.pages,
        sampling: settings.sampling,
        stop: stop.clone(),
    };
    let start = Instant::now();
    let samples = loaded::measure(&config).map_err(MemError::Loaded)?;
    let span = RunSpan::stepped(
        start,
        samples.points.len() as u64,
        config.delays_ns.len() as u64,
        "delays",
    );
    for (k, placement) in samples.placements.iter().enumerate() {
        let what = if k == 0 {
            "chase buffer".to_string()
        } else {
            format!("load buffer of CPU {}", load_cpus[k - 1])
        };
        doc.placements.push(placement_check(what, placement));
    }
    doc.timer_overhead_ns = Some(samples.timer_overhead_ns);
    let points = loaded_points(&samples, doc);
    doc.loaded_latency = Some(Loaded {
        latency_cpu: cpu,
        load_cpus,
        node,
        chase_working_set: chase_set,
        load_working_set: load_set,
        points,
    });
    Ok(span)
}

/// Each delay's latency and load bandwidth, derived from the raw samples
/// in analyze, with the warnings they call for (and the raw samples for
/// `--raw`).
fn loaded_points(samples: &loaded::LoadedSamples, doc: &mut MemDocument) -> Vec<LoadedPoint> {
    let (chases, loads): (Vec<_>, Vec<_>) = samples
        .points
        .iter()
        .map(|p| measured::loaded_point(samples, p))
        .unzip();
    let names = samples.points.iter().map(|p| format!("delay {} ns", p.delay_ns));
    let (latencies, warnings) = timed_rows("load delays", names.zip(&chases));
    doc.warnings.extend(warnings);
    let points = samples
        .points
        .iter()
        .zip(latencies)
        .zip(&loads)
        .map(|((p, latency_ns), load)| LoadedPoint {
            delay_ns: p.delay_ns,
            bandwidth_bytes_per_sec: load.summary(),
            latency_ns,
        })
        .collect();
    if let Some(raw) = doc.raw.as_mut() {
        let delays = samples.points.iter().map(|p| p.delay_ns);
        raw.loaded.extend(
            delays
                .zip(chases.into_iter().zip(loads))
                .map(|(delay_ns, (chase, load))| RawLoaded { delay_ns, chase, load }),
        );
    }
    points
}
