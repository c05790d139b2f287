//! SIGINT and SIGTERM as a request to stop, for every command that runs
//! over time: the first signal sets the shared [`Stop`] token, so the
//! command finishes its current step, reports what it gathered and writes
//! its files; a second one, with the first still pending, exits at once
//! with 130, as a shell expects of a twice-interrupted program. `bisect`
//! asks for the variant where no signal exits at once (it must put every
//! page back first), and SIGHUP joins them there.
//!
//! The signals are taken by one thread through signal-hook's self-pipe (the
//! handler in signal context only writes a byte), so the work a signal
//! starts — removing an unpacked `--root` archive before exiting at once —
//! runs outside signal context. The signals taken here are handed over by
//! the kernel crate's `cleanup` module (which removes unpacked archives and
//! temporary files on the others, SIGHUP and SIGQUIT, itself).

use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};
use std::sync::OnceLock;

use numasleuth_kernel::cleanup::{self, ignored};
use numasleuth_model::stop::Stop;
use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
use signal_hook::iterator::{Handle, Signals};

/// Exit status of a process ended by a second Ctrl-C (128 + SIGINT).
const EXIT_INTERRUPTED: i32 = 130;

struct Shared {
    stop: Stop,
    /// Set for `bisect`: every signal only repeats the request.
    never_exit: AtomicBool,
    /// To add SIGHUP for `bisect`; `None` when no handler could be set.
    handle: Option<Handle>,
}

static SHARED: OnceLock<Shared> = OnceLock::new();
/// The last signal taken, 0 before any.
static LAST_SIGNAL: AtomicI32 = AtomicI32::new(0);

/// The signal that requested the stop most recently, for a message.
pub fn last_signal() -> Option<i32> {
    Some(LAST_SIGNAL.load(Ordering::Relaxed)).filter(|s| *s != 0)
}

/// The process-wide stop token, with SIGINT and SIGTERM connected to it.
pub fn stop_on_signals() -> Stop {
    shared().stop.clone()
}

/// [`stop_on_signals`] for a command that must undo what it changed before
/// it may end: SIGINT, SIGTERM and SIGHUP (a closed terminal) each only
/// request the stop, however many arrive, so the undoing is never cut off.
pub fn stop_on_signals_until_undone() -> Stop {
    let shared = shared();
    shared.never_exit.store(true, Ordering::Relaxed);
    if let Some(handle) = &shared.handle {
        // Under nohup a closed terminal ends nothing: nothing to catch.
        if ignored(SIGHUP) {
            return shared.stop.clone();
        }
        // Handed over first, so the cleanup module never ends us on it.
        cleanup::hand_over(SIGHUP);
        if let Err(e) = handle.add_signal(SIGHUP) {
            say!("numasleuth: warning: cannot catch SIGHUP: {e}; closing the terminal will not restore");
        }
    }
    shared.stop.clone()
}

fn shared() -> &'static Shared {
    SHARED.get_or_init(|| {
        let stop = Stop::new();
        // A signal the shell set to be ignored (SIGINT of a background
        // job started by a script) stays ignored, as it would without us.
        let wanted: Vec<i32> = [SIGINT, SIGTERM].into_iter().filter(|s| !ignored(*s)).collect();
        let handle = match Signals::new(&wanted) {
            Ok(signals) => {
                let handle = signals.handle();
                for signal in &wanted {
                    cleanup::hand_over(*signal);
                }
                let watcher = stop.clone();
                let spawned = std::thread::Builder::new()
                    .name("numasleuth-signals".into())
                    .spawn(move || take_signals(signals, &watcher));
                spawned.ok().map(|_| handle)
            }
            Err(_) => None,
        };
        if handle.is_none() {
            // Without handlers the default action (terminate) stays: the
            // command still stops, it just cannot report.
            say!("numasleuth: warning: cannot catch SIGINT/SIGTERM; Ctrl-C will not keep results");
        }
        Shared {
            stop,
            never_exit: AtomicBool::new(false),
            handle,
        }
    })
}

fn take_signals(mut signals: Signals, stop: &Stop) {
    for signal in signals.forever() {
        LAST_SIGNAL.store(signal, Ordering::Relaxed);
        let first = !stop.requested();
        stop.request();
        let never_exit = SHARED.get().is_some_and(|s| s.never_exit.load(Ordering::Relaxed));
        if first || never_exit {
            continue;
        }
        // Exiting at once runs no destructor, so an unpacked --root
        // archive and any temporary file of a report are removed here.
        cleanup::remove_all();
        // SAFETY: _exit ends the process without touching Rust state.
        unsafe { libc::_exit(EXIT_INTERRUPTED) };
    }
}
