//! Thread migrations between CPUs from the `sched:sched_migrate_task`
//! tracepoint.
//!
//! The tracepoint fires in the context of whoever moves the task (the
//! load balancer, a waker, `sched_setaffinity`'s stopper), not the task
//! itself, so a per-thread event would miss most moves: one event per
//! online CPU (`pid = -1`) is opened instead, sampling every hit with its
//! raw record, and the caller keeps the tasks it cares about. Only the
//! moved task's id and the two CPUs are kept; memory is bounded by
//! [`MAX_TASKS`]. Finding the tracepoint's id and record layout (tracefs)
//! is the caller's job, through its `Root`.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use numasleuth_kernel::tracefs::migrate::{MigrateLayout, Move};
use numasleuth_model::stop::Stop;
use perf_event::data::Record;
use perf_event::{SampleFlag, Sampler};
use serde::Serialize;

use crate::ring;
use crate::tracepoint;

/// Distinct tasks tracked (a whole machine's worth for `--all`).
pub const MAX_TASKS: usize = 65_536;
/// CPU moves kept per task, to name the CPUs visited.
pub const MAX_MOVES_PER_TASK: usize = 4096;
/// CPU moves kept over all tasks (32 MiB); past it moves are only counted,
/// and the report marks the paths as truncated.
pub const MAX_MOVES_KEPT: usize = 1 << 22;
const POLL: Duration = Duration::from_millis(10);

/// Every move of one task, in order (at most [`MAX_MOVES_PER_TASK`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TaskMoves {
    pub tid: u32,
    pub comm: String,
    pub moves: u64,
    pub path: Vec<(u32, u32)>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MigrateRaw {
    pub duration_s: f64,
    pub tasks: Vec<TaskMoves>,
    /// Records the kernel dropped (full ring buffer).
    pub lost_records: u64,
    /// Tasks not tracked because [`MAX_TASKS`] was reached.
    pub tasks_dropped: u64,
}

/// Opens the tracepoint on each CPU; the error is the first refusal
/// (EACCES: perf_event_paranoid; ENOENT: no such tracepoint).
pub fn open(tracepoint_id: u64, cpus: &[u32], ring_pages: usize) -> Result<Vec<Sampler>, std::io::Error> {
    let mut samplers = tracepoint::open_per_cpu(tracepoint_id, cpus, ring_pages, &|builder, _| {
        builder.sample(SampleFlag::RAW);
    })?;
    tracepoint::enable_all(&mut samplers)?;
    Ok(samplers)
}

/// Drains `samplers` for `duration`, or until `stop` is requested, keeping
/// the moves `keep` accepts.
pub fn collect(
    samplers: &mut [Sampler],
    layout: &MigrateLayout,
    duration: Duration,
    keep: &mut dyn FnMut(u32) -> bool,
    stop: &Stop,
) -> MigrateRaw {
    let start = Instant::now();
    let mut tasks: HashMap<u32, TaskMoves> = HashMap::new();
    let (mut lost, mut dropped, mut kept) = (0u64, 0u64, 0usize);
    loop {
        let done = start.elapsed() >= duration || stop.requested();
        for sampler in samplers.iter_mut() {
            let each = |record: perf_event::Record<'_>| match record.parse_record() {
                Ok(Record::Sample(sample)) => {
                    let Some(m) = sample.raw().and_then(|raw| layout.decode(raw)) else {
                        return;
                    };
                    if keep(m.tid) {
                        add(&mut tasks, m, &mut dropped, &mut kept);
                    }
                }
                Ok(Record::Lost(l)) => lost = lost.saturating_add(l.lost),
                Ok(Record::LostSamples(l)) => lost = lost.saturating_add(l.lost),
                _ => {}
            };
            // The last pass empties the ring of an event it could disable;
            // the others are bounded (`ring`), so the deadline and a stop
            // are seen however fast moves come.
            if done && sampler.disable().is_ok() {
                ring::drain_stopped(sampler, each);
            } else {
                ring::drain_pass(sampler, each);
            }
        }
        if done {
            break;
        }
        stop.sleep(POLL.min(duration.saturating_sub(start.elapsed())));
    }
    let mut tasks: Vec<TaskMoves> = tasks.into_values().collect();
    tasks.sort_by_key(|t| t.tid);
    MigrateRaw {
        duration_s: start.elapsed().as_secs_f64(),
        tasks,
        lost_records: lost,
        tasks_dropped: dropped,
    }
}

fn add(tasks: &mut HashMap<u32, TaskMoves>, m: Move, dropped: &mut u64, kept: &mut usize) {
    if !tasks.contains_key(&m.tid) && tasks.len() >= MAX_TASKS {
        *dropped = dropped.saturating_add(1);
        return;
    }
    let task = tasks.entry(m.tid).or_insert_with(|| TaskMoves {
        tid: m.tid,
        comm: m.comm.clone(),
        moves: 0,
        path: Vec::new(),
    });
    task.moves += 1;
    task.comm = m.comm;
    if task.path.len() < MAX_MOVES_PER_TASK && *kept < MAX_MOVES_KEPT {
        task.path.push((m.from_cpu, m.to_cpu));
        *kept += 1;
    }
}
