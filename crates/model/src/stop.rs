//! One way for every loop that runs over time to be told to stop.
//!
//! Why: a sampling command stopped with Ctrl-C must report what it gathered,
//! exactly as if its duration had run out (`perf stat -p` does this). Each
//! loop polls one shared [`Stop`] token between steps; the binary connects
//! SIGINT and SIGTERM to it once, so no collector installs handlers of its
//! own. The token is a plain atomic flag: no I/O, no signals here.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde::Serialize;

/// A request to stop, shared by the signal handler and every loop.
#[derive(Debug, Clone, Default)]
pub struct Stop(Arc<AtomicBool>);

/// Longest a [`Stop::sleep`] sleeps between looks at the flag: a Ctrl-C is
/// answered within this, and a 1-second sampling interval costs 20 wakeups.
const POLL: Duration = Duration::from_millis(50);

impl Stop {
    pub fn new() -> Stop {
        Stop::default()
    }

    pub fn request(&self) {
        self.0.store(true, Ordering::Relaxed);
    }

    pub fn requested(&self) -> bool {
        self.0.load(Ordering::Relaxed)
    }

    /// Sleeps for `duration`, or less when a stop is requested meanwhile.
    /// Returns whether a stop was requested.
    pub fn sleep(&self, duration: Duration) -> bool {
        self.sleep_until(Instant::now() + duration)
    }

    /// Sleeps until `deadline`, or less when a stop is requested meanwhile.
    /// Returns whether a stop was requested.
    pub fn sleep_until(&self, deadline: Instant) -> bool {
        loop {
            if self.requested() {
                return true;
            }
            let now = Instant::now();
            if now >= deadline {
                return false;
            }
            std::thread::sleep((deadline - now).min(POLL));
        }
    }
}

/// How a run ended, for the report: "stopped after 1.5 s of 30 s". Every
/// command that samples or measures over time carries one, so a reader
/// can tell a short run from a run cut short.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RunSpan {
    /// How long it actually ran.
    pub ran_s: f64,
    /// What was asked for; `None` for "until stopped" or for a run whose
    /// length is a count of steps, not a time.
    pub planned_s: Option<f64>,
    /// Whether a stop request (Ctrl-C, SIGTERM) ended it early.
    pub stopped_early: bool,
    /// For a run of steps (matrix cells, configurations, runs): how many
    /// of how many were done.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub steps: Option<Steps>,
}

/// Steps done of those planned, and what a step is (`cells`, `runs`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Steps {
    pub done: u64,
    pub planned: u64,
    pub unit: String,
}

impl RunSpan {
    pub fn new(ran: Duration, planned: Option<Duration>, stopped_early: bool) -> RunSpan {
        RunSpan {
            ran_s: ran.as_secs_f64(),
            planned_s: planned.map(|d| d.as_secs_f64()),
            stopped_early,
            steps: None,
        }
    }

    /// A run of timed length that began at `start`, stopped early when
    /// `stop` was requested before its time was up.
    pub fn timed(start: Instant, planned: Option<Duration>, stop: &Stop) -> RunSpan {
        let ran = start.elapsed();
        let early = stop.requested() && planned.is_none_or(|p| ran < p);
        RunSpan::new(ran, planned, early)
    }

    /// A run of `planned` steps of which `done` were done.
    pub fn stepped(start: Instant, done: u64, planned: u64, unit: &str) -> RunSpan {
        RunSpan {
            ran_s: start.elapsed().as_secs_f64(),
            planned_s: None,
            stopped_early: done < planned,
            steps: Some(Steps {
                done,
                planned,
                unit: unit.to_string(),
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sleep_runs_its_course_without_a_request() {
        let stop = Stop::new();
        let started = Instant::now();
        assert!(!stop.sleep(Duration::from_millis(20)));
        assert!(started.elapsed() >= Duration::from_millis(20));
    }

    #[test]
    fn a_request_from_another_thread_ends_a_long_sleep() {
        let stop = Stop::new();
        let other = stop.clone();
        let started = Instant::now();
        let waker = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(30));
            other.request();
        });
        assert!(stop.sleep(Duration::from_secs(60)));
        waker.join().unwrap();
        // Ended by the request, not by the 60 s.
        assert!(started.elapsed() < Duration::from_secs(30));
        assert!(stop.requested());
    }

    #[test]
    fn a_span_is_early_only_when_stopped_before_its_time() {
        let stop = Stop::new();
        let start = Instant::now();
        assert!(!RunSpan::timed(start, Some(Duration::from_secs(60)), &stop).stopped_early);
        stop.request();
        assert!(RunSpan::timed(start, Some(Duration::from_secs(60)), &stop).stopped_early);
        assert!(RunSpan::timed(start, None, &stop).stopped_early);
        // A stop that came after the time was up changed nothing.
        assert!(!RunSpan::timed(start, Some(Duration::ZERO), &stop).stopped_early);
        let steps = RunSpan::stepped(start, 3, 8, "cells");
        assert!(steps.stopped_early);
        assert_eq!(steps.steps.as_ref().map(|s| (s.done, s.planned)), Some((3, 8)));
        assert!(!RunSpan::stepped(start, 8, 8, "cells").stopped_early);
    }

    #[test]
    fn a_request_made_before_the_sleep_returns_at_once() {
        let stop = Stop::new();
        stop.request();
        assert!(stop.sleep_until(Instant::now() + Duration::from_secs(60)));
    }
}
