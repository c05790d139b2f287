//! The application layer: what numasleuth does for a request, between the
//! collectors (`kernel`, `probe`, `symbols`, `measure`) and the front-ends
//! (`cli`, `serve`, `top`). Each investigation gathers typed observations
//! and hands them to `analyze`, where they are joined and judged; the
//! front-ends pass a request and render what comes back.
//!
//! `doctor -p`'s investigation of a process is here ([`doctor`]), with the
//! collectors' pipelines it runs: the placement model ([`process`]), the
//! cache-line sample ([`hotlines`]) and the thread moves ([`migrations`]);
//! so are `hotpages`' DAMON watch of a process's memory ([`hotpages`]),
//! which `doctor --pid --measure` runs too, `top`'s frame per refresh
//! ([`top`]), and the machine a measurement runs on, with the rules that
//! refuse what could not be measured honestly ([`machine`]). The
//! measuring commands' pipelines are here too: `mem` ([`mem`]: plan,
//! size, measure, measure again, judge), `c2c` ([`c2c`]) and the
//! contention lab's experiments ([`lab`]: false sharing, locks, the
//! remote global), with what they share: raw samples as analysis reads
//! them ([`measured`]) and a run of steps that a front-end draws
//! ([`steps`]).
//! The commands that change page placement are here too: `move`
//! ([`moves`]) and `bisect` ([`bisect`]), which share one set-up of the
//! pages asked for ([`page_targets`]), and `undo` ([`undo`]).
//! So are `doctor`'s diagnosis of the machine ([`doctor::machine`], with
//! `--measure`'s checks in [`doctor::measure`]), the topology read once
//! with its warnings ([`env`]), the one resolver of the processes a user
//! names ([`process_ref`]), and the pipelines of `snapshot`
//! ([`snapshot`]), `pmu` ([`pmu`], [`pmu_diff`]), `lines` ([`lines`]),
//! `irq` ([`irq`]) and `meminfo` ([`meminfo`]).
//! The other commands move here as issue 35 says.

pub mod bisect;
pub mod c2c;
pub mod doctor;
pub mod env;
pub mod hotlines;
pub mod hotpages;
pub mod irq;
pub mod lab;
pub mod lines;
pub mod machine;
pub mod measured;
pub mod mem;
pub mod meminfo;
pub mod migrations;
pub mod moves;
pub mod page_targets;
pub mod pmu;
pub mod pmu_diff;
pub mod probe_latency;
pub mod process;
pub mod process_ref;
pub mod readers;
pub mod runs;
pub mod snapshot;
pub mod steps;
pub mod top;
pub mod undo;
pub mod watch;

use std::time::Duration;

/// Hears what an investigation has to say while it runs: progress lines
/// and warnings for a person (cli prints them to stderr; `serve` drops
/// them).
pub trait Observer: Sync {
    fn progress(&self, line: &str);
}

/// An observer that drops every line.
pub struct Quiet;

impl Observer for Quiet {
    fn progress(&self, _line: &str) {}
}

/// A command (`what`) that changes the live system, refused a snapshot.
#[derive(Debug, thiserror::Error)]
#[error("{what} changes the live system; --root names a snapshot, which is not a system to change")]
pub struct SnapshotRefused {
    pub what: String,
}

/// Refuses a snapshot for a command (`what`) that changes the live system.
pub fn refuse_under_snapshot(root: &numasleuth_kernel::Root, what: &str) -> Result<(), SnapshotRefused> {
    if root.is_live() {
        return Ok(());
    }
    Err(SnapshotRefused { what: what.to_string() })
}

/// An error and its causes in one line, joined by ": ", as the binary
/// prints them (anyhow's `{:#}`): for the notes of skipped checks.
pub fn error_chain(error: &dyn std::error::Error) -> String {
    let mut line = error.to_string();
    let mut cause = error.source();
    while let Some(e) = cause {
        line.push_str(": ");
        line.push_str(&e.to_string());
        cause = e.source();
    }
    line
}

/// "for 1.0 s (Ctrl-C stops early and reports)", or "until Ctrl-C": how
/// long a watch lasts, in its progress line.
pub fn how_long(duration: Option<Duration>) -> String {
    match duration {
        Some(d) => format!("for {:.1} s (Ctrl-C stops early and reports)", d.as_secs_f64()),
        None => "until Ctrl-C (then reports)".to_string(),
    }
}
