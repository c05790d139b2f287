//! The application layer: what numasleuth does for a request, between the
//! collectors (`kernel`, `probe`, `symbols`, `measure`) and the front-ends
//! (`cli`, `serve`, `top`). Each command here is a clap-free request and
//! one function; it gathers typed observations, hands them to `analyze`
//! to be joined and judged, and returns the document `report` renders.
//! Progress goes to an [`Observer`] (or a [`steps::StepObserver`] for a
//! run of measured steps), Ctrl-C arrives as the stop token, and errors
//! are typed (no anyhow below cli).
//!
//! - What every command starts from: the topology read once with its
//!   warnings ([`mod@env`]), the limits on every value a request carries
//!   and the value parsers bound to them ([`limits`]), the one resolver
//!   of the processes a user names ([`process_ref`]), and the machine a
//!   measurement runs on with the rules that refuse what could not be
//!   measured honestly ([`machine`]).
//! - `doctor`: the machine's diagnosis ([`doctor::machine`], `--measure`'s
//!   checks in [`doctor::measure`]) and a process's investigation
//!   ([`doctor`]), with the pipelines it runs: the placement model
//!   ([`process`], `inspect`'s), the cache-line sample ([`hotlines`]), the
//!   thread moves ([`migrations`]) and DAMON's watch ([`hotpages`]).
//! - Measurements: `mem` ([`mem`]), `c2c` ([`c2c`]), the contention lab
//!   ([`lab`]) and `probe-latency` ([`probe_latency`]), sharing raw samples
//!   as analysis reads them ([`measured`]) and a run of steps ([`steps`]);
//!   `runs` ([`runs`]), `pmu` ([`pmu`], [`pmu_diff`]).
//! - Watches: `watch` ([`watch`]), `readers` ([`readers`]), `top`'s frame
//!   per refresh ([`top`]), and `memwatch`'s samples, handed to the
//!   front-end as each is taken ([`memwatch`]).
//! - Changes, each journalled and undoable: `move` ([`moves`]) and `bisect`
//!   ([`bisect`]) from one set-up of the pages asked for
//!   ([`page_targets`]), `undo` ([`undo`]), and `irq --apply` ([`irq`]).
//! - Readings as they are: `snapshot` ([`snapshot`]), `lines` ([`lines`]),
//!   `meminfo` ([`meminfo`]); what every report's provenance says
//!   ([`provenance`]).

pub mod bisect;
pub mod c2c;
pub mod doctor;
pub mod env;
pub mod hotlines;
pub mod hotpages;
pub mod irq;
pub mod lab;
pub mod limits;
pub mod lines;
pub mod machine;
pub mod measured;
pub mod mem;
pub mod meminfo;
pub mod memwatch;
pub mod migrations;
pub mod moves;
pub mod page_targets;
pub mod pmu;
pub mod pmu_diff;
pub mod probe_latency;
pub mod process;
pub mod process_ref;
pub mod provenance;
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
