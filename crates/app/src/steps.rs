//! A measurement's run of steps (matrix cells, buffer sizes): how many
//! are planned and begun, the stop token its loop looks at between them,
//! and how far it got ([`RunSpan`]). What a person sees of it is the
//! front-end's ([`StepObserver`]: cli's progress bar), so the counting
//! that a report rests on never depends on a terminal.

use std::time::Instant;

use numasleuth_model::stop::{RunSpan, Stop};

/// Hears a measurement as it runs: its steps, for a progress display, and
/// the lines it has for a person (said before a long step, or when a size
/// grew). It never decides anything.
pub trait StepObserver {
    /// A line for a person (cli: stderr).
    fn say(&self, line: &str);
    /// A run of `total` steps, named `label`, starts now.
    fn begin(&mut self, total: u64, label: &str);
    /// Step `done` of `total` (1-based) starts; `what` names it.
    fn step(&mut self, done: u64, total: u64, what: &str);
    /// The run is over, finished or stopped.
    fn end(&mut self);
}

/// An observer that hears nothing: for callers with no person to tell.
pub struct Unobserved;

impl StepObserver for Unobserved {
    fn say(&self, _line: &str) {}
    fn begin(&mut self, _total: u64, _label: &str) {}
    fn step(&mut self, _done: u64, _total: u64, _what: &str) {}
    fn end(&mut self) {}
}

/// One run of steps: each loop asks [`Steps::stopped`] before its next
/// step, so a stop ends the run after the step under way and the report
/// shows the steps done ([`Steps::span`]).
pub struct Steps<'a> {
    observer: &'a mut dyn StepObserver,
    start: Instant,
    total: u64,
    done: u64,
    stop: Stop,
}

impl<'a> Steps<'a> {
    pub fn new(observer: &'a mut dyn StepObserver, stop: &Stop, total: u64, label: &str) -> Self {
        observer.begin(total, label);
        Steps {
            observer,
            start: Instant::now(),
            total,
            done: 0,
            stop: stop.clone(),
        }
    }

    /// The next step begins.
    pub fn step(&mut self, what: &str) {
        self.done += 1;
        self.observer.step(self.done, self.total, what);
    }

    /// Adds `steps` to those planned (cells measured again).
    pub fn plan_more(&mut self, steps: u64) {
        self.total += steps;
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

    pub fn say(&self, line: &str) {
        self.observer.say(line);
    }

    /// How the run went: the steps begun (each finishes before the loop
    /// looks at the token again) of those planned, in `unit`s.
    pub fn span(&self, unit: &str) -> RunSpan {
        RunSpan::stepped(self.start, self.done, self.total, unit)
    }

    pub fn finish(&mut self) {
        self.observer.end();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Records what it heard, to check what a run tells its observer.
    #[derive(Default)]
    struct Heard {
        events: Vec<String>,
    }

    impl StepObserver for Heard {
        fn say(&self, _line: &str) {}
        fn begin(&mut self, total: u64, label: &str) {
            self.events.push(format!("begin {total} {label}"));
        }
        fn step(&mut self, done: u64, total: u64, what: &str) {
            self.events.push(format!("step {done}/{total} {what}"));
        }
        fn end(&mut self) {
            self.events.push("end".into());
        }
    }

    #[test]
    fn a_run_counts_its_steps_and_the_ones_planned_later() {
        let mut heard = Heard::default();
        let stop = Stop::new();
        let span = {
            let mut steps = Steps::new(&mut heard, &stop, 2, "mem");
            steps.step("a");
            steps.plan_more(1);
            steps.step("b");
            steps.finish();
            steps.span("cells")
        };
        assert_eq!(heard.events, ["begin 2 mem", "step 1/2 a", "step 2/3 b", "end"]);
        let counted = span.steps.expect("a run of steps says its steps");
        assert_eq!((counted.done, counted.planned, counted.unit.as_str()), (2, 3, "cells"));
        assert!(span.stopped_early, "2 of 3 steps is a run cut short");
    }

    #[test]
    fn a_stop_is_seen_through_the_run() {
        let stop = Stop::new();
        let mut unobserved = Unobserved;
        let steps = Steps::new(&mut unobserved, &stop, 1, "x");
        assert!(!steps.stopped());
        stop.request();
        assert!(steps.stopped() && steps.stop_token().requested());
    }
}
