//! SIGINT and SIGTERM as a request to stop, for every command that runs
//! over time: the first signal sets the shared [`Stop`] token, so the
//! command finishes its current step, reports what it gathered and writes
//! its files; a second one, with the first still pending, exits at once
//! with 130, as a shell expects of a twice-interrupted program.
//!
//! Handlers come from signal-hook (async-signal-safe flag stores), installed
//! once per process however often this is called.

use std::sync::OnceLock;

use numasleuth_model::stop::Stop;
use signal_hook::consts::{SIGINT, SIGTERM};

/// Exit status of a process ended by a second Ctrl-C (128 + SIGINT).
const EXIT_INTERRUPTED: i32 = 130;

static STOP: OnceLock<Stop> = OnceLock::new();

/// The process-wide stop token, with SIGINT and SIGTERM connected to it.
pub fn stop_on_signals() -> Stop {
    STOP.get_or_init(|| {
        let stop = Stop::new();
        for signal in [SIGINT, SIGTERM] {
            // Order matters: the conditional exit is checked before the flag
            // is set, so only a signal arriving with the flag already set
            // (the second one) exits.
            let installed = signal_hook::flag::register_conditional_shutdown(signal, EXIT_INTERRUPTED, stop.flag())
                .and_then(|_| signal_hook::flag::register(signal, stop.flag()));
            if let Err(e) = installed {
                // Without handlers the default action (terminate) stays: the
                // command still stops, it just cannot report.
                say!("numasleuth: warning: cannot catch signal {signal}: {e}; Ctrl-C will not keep results");
            }
        }
        stop
    })
    .clone()
}
