//! Stage two for `mem` and `c2c`: the live machine (its rules are the
//! application layer's, `numasleuth_app::machine`), and what a terminal
//! adds to a measurement: progress, colour, the cycle counter's note.

use std::io::IsTerminal;
use std::time::{Duration, Instant};

use anyhow::bail;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use numasleuth_analyze::mem::placement_note;
pub use numasleuth_app::machine::Machine;
use numasleuth_kernel::Root;
use numasleuth_measure::steps::StepError;
use numasleuth_measure::{clock, PageKind, Placement};
use numasleuth_model::stop::{RunSpan, Stop};
use numasleuth_report::mem_json::PlacementCheck;

use super::measure_args::PagesArg;

/// The live machine for `command`: refused on a snapshot (it measures
/// this machine), its topology's warnings said once.
pub fn machine(root: &Root, command: &str) -> anyhow::Result<Machine> {
    if !root.is_live() {
        bail!(
            "`{command}` measures this machine, so it cannot run on --root {}",
            root.base().display()
        );
    }
    Ok(Machine::new(root, super::topology(root)?)?)
}

pub fn page_kind(pages: PagesArg) -> PageKind {
    match pages {
        PagesArg::Small => PageKind::Small,
        PagesArg::Thp => PageKind::Transparent,
        PagesArg::Huge => PageKind::HugeTlb,
    }
}

pub fn page_kind_name(pages: PagesArg) -> &'static str {
    match pages {
        PagesArg::Small => "base",
        PagesArg::Thp => "transparent huge",
        PagesArg::Huge => "hugetlb",
    }
}

pub fn placement_check(what: String, placement: &Placement) -> PlacementCheck {
    let elsewhere: Vec<(u32, usize)> = placement.pages_elsewhere.iter().map(|e| (e.node, e.pages)).collect();
    let note = placement_note(
        placement.verified,
        placement.unverifiable.as_deref(),
        &elsewhere,
        placement.pages_unknown,
    );
    PlacementCheck {
        what,
        node: placement.requested_node,
        pages_checked: placement.pages_checked,
        pages_on_node: placement.pages_on_node,
        verified: placement.verified,
        note,
    }
}

/// A grid step that failed, as the one-line error `numasleuth` prints:
/// `what` names the step ("CPUs 0 and 1"), the cause follows.
pub fn step_error<S>(failed: StepError<S>, what: impl FnOnce(&S) -> String) -> anyhow::Error {
    anyhow::Error::new(failed.error).context(what(&failed.step))
}

/// Reference cycles per ns when known, and what they are or why not.
pub fn cycles() -> (Option<f64>, String) {
    match clock::cycle_clock(20) {
        Ok(c) => (Some(c.cycles_per_ns), c.source),
        Err(reason) => (None, reason.to_string()),
    }
}

/// Colour only for a terminal, and never when NO_COLOR is set
/// (https://no-color.org).
pub fn colour() -> bool {
    std::io::stdout().is_terminal() && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
}

/// A progress bar on stderr that appears only once work has taken more
/// than a second, and only on a terminal.
/// Progress of a run of steps (matrix cells, configurations), on stderr
/// once it takes more than a second, and the stop token its loop polls:
/// each loop asks [`Progress::stopped`] before its next step, so Ctrl-C
/// ends the run after the step under way and the report shows the steps
/// done ([`Progress::span`]).
pub struct Progress {
    bar: Option<ProgressBar>,
    start: Instant,
    total: u64,
    done: u64,
    message: String,
    stop: Stop,
}

impl Progress {
    pub fn new(total: u64, message: &str) -> Self {
        Progress {
            bar: None,
            start: Instant::now(),
            total,
            done: 0,
            message: message.to_string(),
            stop: super::stop_signal::stop_on_signals(),
        }
    }

    pub fn step(&mut self, what: &str) {
        if self.bar.is_none() && self.start.elapsed() > Duration::from_secs(1) && std::io::stderr().is_terminal() {
            let bar = ProgressBar::with_draw_target(Some(self.total), ProgressDrawTarget::stderr());
            bar.set_style(
                ProgressStyle::with_template("{prefix} [{bar:30}] {pos}/{len} {msg} ({elapsed})")
                    .unwrap_or_else(|_| ProgressStyle::default_bar())
                    .progress_chars("=> "),
            );
            bar.set_prefix(numasleuth_kernel::safe_text::for_terminal(&self.message).into_owned());
            bar.set_position(self.done);
            self.bar = Some(bar);
        }
        self.done += 1;
        if let Some(bar) = &self.bar {
            // The progress bar is the one way to stderr that bypasses `say!`.
            bar.set_message(numasleuth_kernel::safe_text::for_terminal(what).into_owned());
            bar.set_position(self.done);
        }
    }

    /// Adds `steps` to those planned (cells measured again).
    pub fn plan_more(&mut self, steps: u64) {
        self.total += steps;
        if let Some(bar) = &self.bar {
            bar.set_length(self.total);
        }
    }

    /// Whether a stop (Ctrl-C, SIGTERM) was asked for: the caller ends
    /// before its next step.
    pub fn stopped(&self) -> bool {
        self.stop.requested()
    }

    /// The stop token for a measure grid to look at between its steps.
    pub fn stop_token(&self) -> Stop {
        self.stop.clone()
    }

    /// How the run went: the steps begun (each finishes before the loop
    /// looks at the token again) of those planned, in `unit`s.
    pub fn span(&self, unit: &str) -> RunSpan {
        RunSpan::stepped(self.start, self.done, self.total, unit)
    }

    pub fn finish(&self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}
