//! How big `mem`'s buffers are: the working-set rule
//! (`numasleuth_analyze::working_set`) applied to the CPUs that measure and
//! the nodes that hold the memory, and the self-check chase at twice the
//! size (`numasleuth_analyze::latency_check`) that every latency matrix
//! carries.

use anyhow::Context;
use numasleuth_analyze::latency_check::{self, CurveCheck, PROBE_FACTOR};
use numasleuth_analyze::stats::Summary;
use numasleuth_analyze::timing::RawLatency;
use numasleuth_analyze::working_set::{choose, largest_cache, largest_cache_streamed, NodeRoom, WorkingSet};
use numasleuth_measure::latency::{ChaseBuffer, Sampling};
use numasleuth_model::units::bytes;
use numasleuth_report::mem_json::MemDocument;

use super::measure_plan::{placement_check, Machine};
use super::measure_raw;
use super::mem::Settings;

/// Samples the self-check takes: it is one cheap probe, not a figure.
const PROBE_SAMPLES: usize = 3;

fn rooms(machine: &Machine, nodes: &[u32], reserved_bytes: u64) -> Vec<NodeRoom> {
    nodes
        .iter()
        .filter_map(|n| machine.room(*n))
        .map(|mut room| {
            room.free_bytes = room.free_bytes.saturating_sub(reserved_bytes);
            room
        })
        .collect()
}

/// The chase buffer: one CPU chases at a time, so each chasing CPU is its
/// own group, and the largest cache any of them reaches decides.
pub fn chase_set(machine: &Machine, size: Option<usize>, chasing_cpus: &[u32], nodes: &[u32]) -> WorkingSet {
    let groups: Vec<[u32; 1]> = chasing_cpus.iter().map(|c| [*c]).collect();
    let groups: Vec<&[u32]> = groups.iter().map(|g| &g[..]).collect();
    let cache = largest_cache(&machine.topo.caches, &groups);
    choose(cache, &rooms(machine, nodes, 0), 1, size.map(|s| s as u64))
}

/// Buffers of threads that run together (`rows`: each row's CPUs), all on
/// one of `nodes` at a time, beside `reserved_bytes` already placed there.
pub fn threads_set(
    machine: &Machine,
    size: Option<usize>,
    rows: &[Vec<u32>],
    nodes: &[u32],
    reserved_bytes: u64,
) -> WorkingSet {
    let groups: Vec<&[u32]> = rows.iter().map(Vec::as_slice).collect();
    let threads = rows.iter().map(Vec::len).max().unwrap_or(1) as u64;
    // Streamed, not chased: the larger factor (working_set::STREAM_FACTOR).
    let cache = largest_cache_streamed(&machine.topo.caches, &groups);
    choose(
        cache,
        &rooms(machine, nodes, reserved_bytes),
        threads,
        size.map(|s| s as u64),
    )
}

/// Loaded latency's chase and load buffers: each follows the rule (or
/// `--size`), and the load's share the node with the chase's.
pub fn loaded_sets(
    machine: &Machine,
    size: Option<usize>,
    chasing_cpu: u32,
    load_cpus: &[u32],
    node: u32,
) -> (WorkingSet, WorkingSet) {
    let chase = chase_set(machine, size, &[chasing_cpu], &[node]);
    let rows = [load_cpus.to_vec()];
    let load = threads_set(machine, size, &rows, &[node], chase.working_set_bytes);
    (chase, load)
}

/// The chase at twice `set` from `cpu` to `node`, compared with `figure`
/// (that pair's median). `Err` carries why it did not run.
pub fn self_check(
    machine: &Machine,
    settings: &Settings,
    (cpu, node): (u32, u32),
    set: &WorkingSet,
    figure: Option<&Summary>,
    doc: &mut MemDocument,
) -> Result<CurveCheck, String> {
    let figure = figure.ok_or("the checked cell has no figure")?;
    let probe_bytes = set.working_set_bytes.saturating_mul(PROBE_FACTOR);
    if let Some(room) = machine.room(node).filter(|r| probe_bytes > r.usable_bytes()) {
        return Err(format!(
            "a chase over {} does not fit in node {node}'s {} free above its high watermark",
            bytes(probe_bytes),
            bytes(room.usable_bytes())
        ));
    }
    machine
        .check_fits(node, probe_bytes as usize, "the self-check's chase")
        .map_err(|e| e.to_string())?;
    let measured = (|| {
        let buffer = ChaseBuffer::allocate(probe_bytes as usize, node, settings.pages, 0xc4ec_u64 ^ probe_bytes)
            .with_context(|| format!("cannot set up a {} buffer on node {node}", bytes(probe_bytes)))?;
        let sampling = Sampling {
            samples: PROBE_SAMPLES,
            ..settings.sampling
        };
        let samples = buffer.measure(cpu, sampling)?;
        anyhow::Ok((
            placement_check(format!("self-check buffer on node {node}"), buffer.placement()),
            samples,
        ))
    })();
    let (placement, samples) = measured.map_err(|e| format!("{e:#}"))?;
    doc.placements.push(placement);
    let chase = measure_raw::chase(&samples);
    let probe = chase.summary().ok_or("the probe gave no figure")?;
    if let Some(raw) = doc.raw.as_mut() {
        raw.self_check.push(RawLatency {
            cpu,
            node,
            size_bytes: samples.size_bytes,
            chase,
        });
    }
    Ok(latency_check::check(set.working_set_bytes, figure, probe_bytes, &probe))
}
