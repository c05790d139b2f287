//! A start gate for measurement threads: each waits at the gate before it
//! does anything, and the caller opens it only once every thread has been
//! spawned. If the OS refuses a thread part-way, the caller aborts the gate
//! instead, the threads already started return at once, and the caller
//! reports the error: no thread is left waiting on a barrier that can
//! never fill, and nothing panics.

use std::sync::atomic::{AtomicBool, Ordering};

#[derive(Default)]
pub(crate) struct StartGate {
    open: AtomicBool,
    abort: AtomicBool,
}

impl StartGate {
    /// Lets the threads go.
    pub(crate) fn open(&self) {
        self.open.store(true, Ordering::Release);
    }

    /// Sends the threads home.
    pub(crate) fn abort(&self) {
        self.abort.store(true, Ordering::Release);
        self.open.store(true, Ordering::Release);
    }

    /// Waits for the caller; `true` to go on, `false` to return.
    pub(crate) fn wait(&self) -> bool {
        while !self.open.load(Ordering::Acquire) {
            std::thread::yield_now();
        }
        !self.abort.load(Ordering::Acquire)
    }
}

/// The error for a thread the OS would not start.
pub(crate) fn spawn_failed(error: std::io::Error) -> crate::error::MeasureError {
    crate::error::MeasureError::Thread(format!("the OS refused to start a measurement thread: {error}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_aborted_gate_sends_waiting_threads_home() {
        let gate = StartGate::default();
        let went = std::thread::scope(|scope| {
            let waiter = scope.spawn(|| gate.wait());
            gate.abort();
            waiter.join().unwrap()
        });
        assert!(!went);
        let gate = StartGate::default();
        gate.open();
        assert!(gate.wait());
    }
}
