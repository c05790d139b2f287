//! How big `mem`'s buffers are: the working-set rule
//! (`numasleuth_analyze::working_set`) applied to the CPUs that measure and
//! the nodes that hold the memory, and the self-check chase at twice the
//! size (`numasleuth_analyze::latency_check`) that every latency matrix
//! carries, and before it the search up from the rule's size to where that
//! check holds (`numasleuth_analyze::flat_search`).

use numasleuth_analyze::flat_search::{self, FlatSearch};
use numasleuth_analyze::latency_check::{self, CurveCheck, PROBE_FACTOR};
use numasleuth_analyze::mem_document::MemDocument;
use numasleuth_analyze::stats::Summary;
use numasleuth_analyze::timing::RawLatency;
use numasleuth_analyze::working_set::{choose, largest_cache, largest_cache_streamed, ChosenBy, NodeRoom, WorkingSet};
use numasleuth_measure::latency::{ChaseBuffer, Sampling};
use numasleuth_model::units::bytes;

use super::Settings;
use crate::machine::Machine;
use crate::measured::{self, placement_check};
use crate::steps::Steps;

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
pub(super) fn chase_set(machine: &Machine, size: Option<usize>, chasing_cpus: &[u32], nodes: &[u32]) -> WorkingSet {
    let groups: Vec<[u32; 1]> = chasing_cpus.iter().map(|c| [*c]).collect();
    let groups: Vec<&[u32]> = groups.iter().map(|g| &g[..]).collect();
    let cache = largest_cache(&machine.topo.caches, &groups);
    choose(cache, &rooms(machine, nodes, 0), 1, size.map(|s| s as u64))
}

/// Buffers of threads that run together (`rows`: each row's CPUs), all on
/// one of `nodes` at a time, beside `reserved_bytes` already placed there.
pub(super) fn threads_set(
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
pub(super) fn loaded_sets(
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

/// One short chase (a few samples) of `size_bytes` on `node` from `cpu`,
/// for the size search and the self-check: its buffer's placement and, with
/// `--raw`, its samples go into the document.
fn probe_chase(
    machine: &Machine,
    settings: &Settings,
    (cpu, node): (u32, u32),
    size_bytes: u64,
    doc: &mut MemDocument,
) -> Result<Summary, String> {
    if let Some(room) = machine.room(node).filter(|r| size_bytes > r.usable_bytes()) {
        return Err(format!(
            "a chase over {} does not fit in node {node}'s {} free above its high watermark",
            bytes(size_bytes),
            bytes(room.usable_bytes())
        ));
    }
    machine
        .check_fits(node, size_bytes as usize, "the self-check's chase")
        .map_err(|e| e.to_string())?;
    // A measure error has no source: its text is the whole reason.
    let buffer = ChaseBuffer::allocate(size_bytes as usize, node, settings.pages, 0xc4ec_u64 ^ size_bytes)
        .map_err(|e| format!("cannot set up a {} buffer on node {node}: {e}", bytes(size_bytes)))?;
    let sampling = Sampling {
        samples: PROBE_SAMPLES,
        ..settings.sampling
    };
    let samples = buffer.measure(cpu, sampling).map_err(|e| e.to_string())?;
    let placement = placement_check(
        format!("{} self-check buffer on node {node}", bytes(size_bytes)),
        buffer.placement(),
    );
    // Freed before the next chase, which may need the node's memory.
    drop(buffer);
    doc.placements.push(placement);
    let chase = measured::chase(&samples);
    let summary = chase.summary().ok_or("the probe gave no figure")?;
    if let Some(raw) = doc.raw.as_mut() {
        raw.self_check.push(RawLatency {
            cpu,
            node,
            size_bytes: samples.size_bytes,
            chase,
        });
    }
    Ok(summary)
}

/// Why the rule's chase size is not searched up from, or `None` when it
/// is: an explicit `--size` is the user's, a size free memory already
/// bounds cannot double, and an emulated CPU's curve follows the
/// emulator's software TLB, not caches (this project's TCG guests: 410 ns
/// at 64 MiB, 1262 ns at 128 MiB).
fn no_search(machine: &Machine, set: &WorkingSet) -> Option<String> {
    match set.chosen_by {
        ChosenBy::Size => Some("the --size given is measured as it is".into()),
        ChosenBy::FreeMemory => Some("free memory already bounds the working set".into()),
        _ if machine.topo.cpu_is_emulated() => {
            Some("the CPU is emulated (QEMU TCG): its latency curve follows the emulator, not the caches".into())
        }
        _ => None,
    }
}

/// Before the latency matrix: raises the rule's chase size while the
/// curve still rises (`numasleuth_analyze::flat_search`), chasing from
/// `cpu` to `node`, within the free memory of every node in `targets`.
/// Updates `set` when the size grew; returns the search (its last probe is
/// the self-check's) or why none ran.
pub(super) fn grow_until_flat(
    machine: &Machine,
    settings: &Settings,
    (cpu, node): (u32, u32),
    targets: &[u32],
    (set, doc): (&mut WorkingSet, &mut MemDocument),
    steps: &Steps,
) -> Result<FlatSearch, String> {
    if let Some(why) = no_search(machine, set) {
        return Err(why);
    }
    let rooms: Option<Vec<u64>> = targets
        .iter()
        .map(|n| machine.room(*n).map(|r| r.usable_bytes()))
        .collect();
    let max_bytes = rooms
        .and_then(|r| r.into_iter().min())
        .ok_or("a measured node's free memory is unknown")?;
    let start_bytes = set.working_set_bytes;
    let found = flat_search::search(start_bytes, max_bytes, |size| {
        probe_chase(machine, settings, (cpu, node), size, doc)
    });
    if found.grew(start_bytes) {
        if let Some(rose) = found.checks.first() {
            steps.say(&format!(
                "numasleuth: the latency curve rises past {} ({:+.0}% at {}): measuring at {}",
                bytes(start_bytes),
                rose.difference * 100.0,
                bytes(rose.probe_size_bytes),
                bytes(found.size_bytes)
            ));
        }
        set.working_set_bytes = found.size_bytes;
        set.per_thread_bytes = found.size_bytes;
        set.chosen_by = ChosenBy::SelfCheck;
    }
    Ok(found)
}

/// The chase at twice `set` from `cpu` to `node`, compared with `figure`
/// (that pair's median); `probe` is the size search's chase at that size,
/// when it ran, so it is not chased again. `Err` carries why it did not
/// run.
pub(super) fn self_check(
    machine: &Machine,
    settings: &Settings,
    pair: (u32, u32),
    (set, probe): (&WorkingSet, Option<&(u64, Summary)>),
    figure: Option<&Summary>,
    doc: &mut MemDocument,
) -> Result<CurveCheck, String> {
    let figure = figure.ok_or("the checked cell has no figure")?;
    let probe_bytes = set.working_set_bytes.saturating_mul(PROBE_FACTOR);
    let probe = match probe.filter(|(size, _)| *size == probe_bytes) {
        Some((_, summary)) => *summary,
        None => probe_chase(machine, settings, pair, probe_bytes, doc)?,
    };
    Ok(latency_check::check(set.working_set_bytes, figure, probe_bytes, &probe))
}
