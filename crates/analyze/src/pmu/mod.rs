//! What a PMU count says: each event's value scaled for multiplexing, IPC
//! when the CPU counts cycles and instructions, and for every event that
//! could not be opened, why, in words a person can act on.
//!
//! Scaling is perf's: the kernel rotates events over the counters there
//! are, so an event that counted for `time_running` out of `time_enabled`
//! is estimated as `value × enabled / running`. Per-thread readings are
//! summed first (value, enabled and running), as `perf stat` does. An
//! event that was enabled but never got a counter has no estimate at all,
//! and says so instead of reporting 0.

pub mod diff;
pub mod diff_document;
pub mod plan;
pub mod precise;
mod why;

use numasleuth_model::perf::catalog;
use numasleuth_model::perf::errno::Errno;
use numasleuth_model::perf::pmu::{PmuRaw, TargetRaw, MAX_COUNTERS};
use serde::Serialize;

pub use why::why_unavailable;

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct EventCount {
    pub name: String,
    pub pmu: String,
    pub value: u64,
    pub time_enabled_ns: u64,
    pub time_running_ns: u64,
    /// `value × enabled / running`; `None` when enabled but never running.
    pub scaled_value: Option<f64>,
    /// Counted only part of the time it was enabled (multiplexed).
    pub scaled: bool,
    /// Threads it was opened on (1 for a command; children are inherited).
    pub threads: usize,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Unavailable {
    pub name: String,
    pub pmu: String,
    pub why: String,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PmuSummary {
    pub target: TargetRaw,
    pub duration_s: f64,
    pub events: Vec<EventCount>,
    pub unavailable: Vec<Unavailable>,
    pub ipc: Option<f64>,
    /// Whether any generic hardware event could be counted.
    pub hardware_pmu: bool,
    pub kernel_included: bool,
    pub notes: Vec<String>,
}

/// Sums per-thread readings and scales the sum.
pub fn scale(value: u64, time_enabled_ns: u64, time_running_ns: u64) -> (Option<f64>, bool) {
    match (time_enabled_ns, time_running_ns) {
        // Never enabled while the task ran: nothing happened to count.
        (0, _) => (Some(value as f64), false),
        (_, 0) => (None, true),
        (enabled, running) if running < enabled => (Some(value as f64 * (enabled as f64 / running as f64)), true),
        _ => (Some(value as f64), false),
    }
}

fn count(event: &numasleuth_model::perf::pmu::EventRaw) -> EventCount {
    let sum = |f: fn(&numasleuth_model::perf::pmu::Reading) -> u64| {
        event.readings.iter().fold(0u64, |acc, r| acc.saturating_add(f(r)))
    };
    let (value, enabled, running) = (sum(|r| r.value), sum(|r| r.time_enabled_ns), sum(|r| r.time_running_ns));
    let (scaled_value, scaled) = scale(value, enabled, running);
    EventCount {
        name: event.spec.name.clone(),
        pmu: event.spec.pmu.clone(),
        value,
        time_enabled_ns: enabled,
        time_running_ns: running,
        scaled_value,
        scaled,
        threads: event.readings.len(),
    }
}

/// Instructions per cycle from the generic hardware events.
pub fn ipc(events: &[EventCount]) -> Option<f64> {
    let get = |name: &str| {
        events
            .iter()
            .find(|e| e.pmu == catalog::PMU_HARDWARE && e.name == name)
            .and_then(|e| e.scaled_value)
    };
    let (instructions, cycles) = (get("instructions")?, get("cycles")?);
    (cycles > 0.0).then(|| instructions / cycles)
}

/// Why not one event could be counted, when none was: a report of
/// nothing would read as a clean bill. The reason of a software event is
/// preferred, since those exist on every kernel.
pub fn nothing_counted(s: &PmuSummary) -> Option<String> {
    if !s.events.is_empty() {
        return None;
    }
    let first = s
        .unavailable
        .iter()
        .find(|u| u.pmu == catalog::PMU_SOFTWARE)
        .or_else(|| s.unavailable.first());
    Some(match first {
        Some(u) => format!(
            "none of the {} events could be counted; {}: {}",
            s.unavailable.len(),
            u.name,
            u.why
        ),
        None => "no event was asked for".to_string(),
    })
}

/// What `summarize` needs besides the raw counts.
#[derive(Debug, Clone, Default)]
pub struct Context {
    /// Events the plan could not even try (malformed aliases, system-wide
    /// PMUs), with their reason.
    pub not_tried: Vec<Unavailable>,
    pub notes: Vec<String>,
    /// `kernel.perf_event_paranoid`, to explain a refusal.
    pub paranoid: Option<i32>,
}

pub fn summarize(raw: &PmuRaw, context: Context) -> PmuSummary {
    let events: Vec<EventCount> = raw.counted.iter().map(count).collect();
    let mut unavailable: Vec<Unavailable> = raw
        .failed
        .iter()
        .map(|f| Unavailable {
            name: f.spec.name.clone(),
            pmu: f.spec.pmu.clone(),
            why: why_unavailable(f, context.paranoid, raw.fd_limit),
        })
        .collect();
    unavailable.extend(context.not_tried);
    let hardware_pmu = events.iter().any(|e| e.pmu == catalog::PMU_HARDWARE);
    let ipc = ipc(&events);
    let mut notes = context.notes;
    notes.extend(hardware_notes(raw, hardware_pmu, ipc, context.paranoid));
    notes.extend(scaling_notes(&events));
    notes.extend(target_notes(raw));
    if !raw.kernel_included {
        notes.push(format!(
            "kernel.perf_event_paranoid is {}: only user-space work is counted (not page-fault handling or \
             syscalls); run as root to include the kernel",
            context.paranoid.map_or_else(|| "unknown".into(), |p| p.to_string())
        ));
    }
    PmuSummary {
        target: raw.target.clone(),
        duration_s: raw.duration_ns as f64 / 1e9,
        events,
        unavailable,
        ipc,
        hardware_pmu,
        kernel_included: raw.kernel_included,
        notes,
    }
}

fn hardware_notes(raw: &PmuRaw, hardware_pmu: bool, ipc: Option<f64>, paranoid: Option<i32>) -> Vec<String> {
    if hardware_pmu {
        return match ipc {
            Some(_) => Vec::new(),
            None => vec!["IPC unavailable: cycles or instructions was not counted (see unavailable)".into()],
        };
    }
    let hardware_failures: Vec<Option<Errno>> = raw
        .failed
        .iter()
        .filter(|f| f.spec.pmu == catalog::PMU_HARDWARE)
        .map(|f| f.errno())
        .collect();
    let refused = hardware_failures
        .iter()
        .any(|e| matches!(e, Some(Errno::Access | Errno::Perm)));
    if refused {
        let level = paranoid.map_or_else(|| "unknown".into(), |p| p.to_string());
        return vec![format!(
            "hardware events refused: kernel.perf_event_paranoid is {level}; IPC unavailable \
             (software events still counted)"
        )];
    }
    if hardware_failures.is_empty() {
        return vec!["no generic hardware event was asked for: IPC unavailable".into()];
    }
    vec!["no hardware PMU (virtualised?): IPC unavailable; the software events are still counted".into()]
}

fn scaling_notes(events: &[EventCount]) -> Vec<String> {
    let mut notes = Vec::new();
    let scaled = events.iter().filter(|e| e.scaled && e.scaled_value.is_some()).count();
    if scaled > 0 {
        notes.push(format!(
            "{scaled} event(s) shared counters with others (multiplexed): their scaled_value = value × \
             time_enabled / time_running is an estimate"
        ));
    }
    let never: Vec<&str> = events
        .iter()
        .filter(|e| e.scaled_value.is_none())
        .map(|e| e.name.as_str())
        .collect();
    if !never.is_empty() {
        notes.push(format!(
            "{} event(s) never got a counter while enabled, so have no value: {}; count fewer events at once \
             (--events)",
            never.len(),
            never.join(", ")
        ));
    }
    notes
}

fn target_notes(raw: &PmuRaw) -> Vec<String> {
    let mut notes = Vec::new();
    match &raw.target {
        TargetRaw::Pid {
            pid,
            threads_not_attached,
            threads_started_while_attaching,
            process_exited,
            ..
        } => {
            notes.push(
                "threads and children the process creates after attaching are counted too (inherited), \
                 children it had before are not (count them by their own PID); events count a thread only while \
                 it runs, so a sleeping process shows little"
                    .into(),
            );
            if *threads_not_attached > 0 {
                notes.push(format!(
                    "{threads_not_attached} thread(s) of process {pid} were not attached (a thread cap, and at most \
                     {MAX_COUNTERS} counters = events × threads); their work is missing: count fewer events \
                     (--events) to attach more threads"
                ));
            }
            if *threads_started_while_attaching > 0 {
                notes.push(format!(
                    "{threads_started_while_attaching} thread(s) started while events were being attached: counted \
                     only if an attached thread created them"
                ));
            }
            if *process_exited {
                notes.push(format!(
                    "process {pid} exited after {:.2} s, before the duration ended",
                    raw.duration_ns as f64 / 1e9
                ));
            }
        }
        TargetRaw::Command { exit_code, signal, .. } => {
            if let Some(signal) = signal {
                notes.push(format!("the command was killed by signal {signal}"));
            } else if let Some(code) = exit_code.filter(|c| *c != 0) {
                notes.push(format!("the command exited with status {code}"));
            }
        }
    }
    notes
}

#[cfg(test)]
#[path = "tests.rs"]
mod tests;
