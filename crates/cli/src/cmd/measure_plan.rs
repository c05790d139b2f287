//! Stage two for `mem`, `c2c` and `lab`: the live machine (its rules are
//! the application layer's, `numasleuth_app::machine`), and what a
//! terminal adds to a measurement: a progress bar and colour.

use std::io::IsTerminal;
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
pub use numasleuth_app::machine::Machine;
use numasleuth_app::steps::StepObserver;
use numasleuth_kernel::Root;

/// The live machine for `command`: refused on a snapshot (it measures
/// this machine), its topology's warnings said once.
pub fn machine(root: &Root, command: &str) -> anyhow::Result<Machine> {
    Machine::refuse_snapshot(root, command)?;
    Ok(Machine::new(root, super::topology(root)?)?)
}

/// Colour only for a terminal, and never when NO_COLOR is set
/// (https://no-color.org).
pub fn colour() -> bool {
    std::io::stdout().is_terminal() && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
}

/// A measurement's steps as a progress bar on stderr, which appears only
/// once the run has taken more than a second, and only on a terminal; its
/// lines go to stderr through `say!`. The application layer's runs
/// (`numasleuth_app::mem`, `c2c`, `lab`) count the steps; this only draws
/// them.
pub struct Bar {
    bar: Option<ProgressBar>,
    start: Instant,
    label: String,
}

impl Bar {
    pub fn new() -> Self {
        Bar {
            bar: None,
            start: Instant::now(),
            label: String::new(),
        }
    }
}

impl StepObserver for Bar {
    fn say(&self, line: &str) {
        say!("{line}");
    }

    fn begin(&mut self, _total: u64, label: &str) {
        self.end();
        self.bar = None;
        self.start = Instant::now();
        self.label = label.to_string();
    }

    fn step(&mut self, done: u64, total: u64, what: &str) {
        if self.bar.is_none() && self.start.elapsed() > Duration::from_secs(1) && std::io::stderr().is_terminal() {
            let bar = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::stderr());
            bar.set_style(
                ProgressStyle::with_template("{prefix} [{bar:30}] {pos}/{len} {msg} ({elapsed})")
                    .unwrap_or_else(|_| ProgressStyle::default_bar())
                    .progress_chars("=> "),
            );
            bar.set_prefix(numasleuth_kernel::safe_text::for_terminal(&self.label).into_owned());
            self.bar = Some(bar);
        }
        if let Some(bar) = &self.bar {
            // The progress bar is the one way to stderr that bypasses `say!`.
            bar.set_length(total);
            bar.set_message(numasleuth_kernel::safe_text::for_terminal(what).into_owned());
            bar.set_position(done);
        }
    }

    fn end(&mut self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}
