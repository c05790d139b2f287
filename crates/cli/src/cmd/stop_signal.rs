//! SIGINT and SIGTERM as a request to stop, for the commands that run until
//! told to (`probe-latency`, `top`): they finish the current step, report
//! what they have and clean up, instead of dying with a file left behind.

use std::sync::atomic::{AtomicBool, Ordering};

/// Set by SIGINT or SIGTERM once [`stop_on_signals`] is called.
pub static STOP: AtomicBool = AtomicBool::new(false);

extern "C" fn on_signal(_: libc::c_int) {
    // Only an atomic store: async-signal-safe.
    STOP.store(true, Ordering::Relaxed);
}

pub fn stop_on_signals() {
    let handler = on_signal as extern "C" fn(libc::c_int) as libc::sighandler_t;
    // SAFETY: the handler only stores to an atomic, which is
    // async-signal-safe; replacing the default disposition is all this does.
    unsafe {
        libc::signal(libc::SIGINT, handler);
        libc::signal(libc::SIGTERM, handler);
    }
}
