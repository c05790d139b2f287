//! A readers session on a thread of its own, for the commands that watch
//! the lock-file readers beside other work: `probe-latency --readers`
//! records them on the probe's clock ([`Recorder`]), and `serve` counts
//! them for as long as it exports (through [`spawn`]).
//!
//! Why a thread that opens its own session: perf's ring buffers are not
//! `Send`, so the session is opened on the thread that reads it, and the
//! starter waits for the answer (the method, or why none could start).

use std::sync::mpsc;
use std::thread::JoinHandle;
use std::time::Duration;

use numasleuth_kernel::Root;
use numasleuth_model::readers::{LockFile, Method, ReadersRaw};
use numasleuth_model::stop::Stop;

use super::error::{SpawnError, StartError};
use super::{Origin, Session, Setup};

/// A session started on its own thread: the thread, the method it uses
/// and the files it watches.
pub struct Started<T> {
    pub handle: JoinHandle<T>,
    pub method: Method,
    pub files: Vec<LockFile>,
}

/// Starts a thread named `name` that opens a session with `open` and then
/// runs `work` on it. Returns once the session is open, or with why it
/// could not be (one line); `work`'s result is the thread's.
pub fn spawn<T, E, O, W>(name: &str, open: O, work: W) -> Result<Started<Option<T>>, SpawnError<E>>
where
    T: Send + 'static,
    E: Send + 'static,
    O: FnOnce() -> Result<Session, E> + Send + 'static,
    W: FnOnce(Session) -> T + Send + 'static,
{
    let (tell, told) = mpsc::channel();
    let handle = std::thread::Builder::new()
        .name(name.into())
        .spawn(move || match open() {
            Ok(session) => {
                let _ = tell.send(Ok((session.method().clone(), session.files().to_vec())));
                Some(work(session))
            }
            Err(e) => {
                let _ = tell.send(Err(e));
                None
            }
        })
        .map_err(|error| SpawnError::Thread {
            name: name.to_string(),
            error,
        })?;
    match told.recv() {
        Ok(Ok((method, files))) => Ok(Started { handle, method, files }),
        Ok(Err(why)) => {
            let _ = handle.join();
            Err(SpawnError::Open(why))
        }
        Err(_) => Err(SpawnError::Ended { name: name.to_string() }),
    }
}

/// `probe-latency --readers`: the opens recorded while the probe runs.
pub struct Recorder {
    stop: Stop,
    handle: JoinHandle<Option<ReadersRaw>>,
}

impl Recorder {
    /// Starts recording, timed from `origin`, for at most `longest`; the
    /// error is why nothing can be recorded (one line).
    pub fn start(
        root: Root,
        setup: Setup,
        origin: Origin,
        longest: Duration,
    ) -> Result<(Recorder, Method), SpawnError<StartError>> {
        let stop = Stop::new();
        let token = stop.clone();
        let started = spawn(
            "lock readers",
            move || Session::start(&root, &setup, origin),
            move |session| session.record(longest, &token),
        )?;
        Ok((
            Recorder {
                stop,
                handle: started.handle,
            },
            started.method,
        ))
    }

    /// Stops recording and returns what was seen.
    pub fn finish(self) -> Option<ReadersRaw> {
        self.stop.request();
        self.handle.join().ok().flatten()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_session_that_cannot_open_is_one_line_and_no_thread_is_left() {
        let called = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let flag = std::sync::Arc::clone(&called);
        let started = spawn(
            "test readers",
            || {
                Err::<Session, _>(StartError::ScanNeedsRoot {
                    reason: "no kprobes here".into(),
                })
            },
            move |_| flag.store(true, std::sync::atomic::Ordering::Relaxed),
        );
        assert!(matches!(
            started.err(),
            Some(SpawnError::Open(StartError::ScanNeedsRoot { reason })) if reason == "no kprobes here"
        ));
        // The work never ran: there was no session to run it on.
        assert!(!called.load(std::sync::atomic::Ordering::Relaxed));
    }
}
