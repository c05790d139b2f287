//! `probe-latency --readers`: the opens of lock-taking kernel files
//! recorded on a thread of their own while the probe runs, on the probe's
//! clock, so each spike can be put next to the reads before it.

use std::sync::mpsc;
use std::thread::JoinHandle;
use std::time::Duration;

use numasleuth_kernel::Root;
use numasleuth_model::readers::{Method, ReadersRaw};
use numasleuth_model::stop::Stop;
use numasleuth_probe::readers::{Origin, Session, Setup};

pub struct Recorder {
    stop: Stop,
    handle: JoinHandle<Option<ReadersRaw>>,
}

impl Recorder {
    /// Starts recording, timed from `origin`; the error is why nothing can
    /// be recorded (one line). perf's ring buffers are not `Send`, so the
    /// session is opened on the thread that reads it.
    pub fn start(root: Root, setup: Setup, origin: Origin, longest: Duration) -> Result<(Recorder, Method), String> {
        let stop = Stop::new();
        let token = stop.clone();
        let (tell, told) = mpsc::channel();
        let handle = std::thread::Builder::new()
            .name("lock readers".into())
            .spawn(move || match Session::start(&root, &setup, origin) {
                Ok(session) => {
                    let _ = tell.send(Ok(session.method().clone()));
                    Some(session.record(longest, &token))
                }
                Err(e) => {
                    let _ = tell.send(Err(e));
                    None
                }
            })
            .map_err(|e| format!("cannot start the readers thread: {e}"))?;
        match told.recv() {
            Ok(Ok(method)) => Ok((Recorder { stop, handle }, method)),
            Ok(Err(why)) => {
                let _ = handle.join();
                Err(why)
            }
            Err(_) => Err("the readers thread ended before it started".into()),
        }
    }

    /// Stops recording and returns what was seen.
    pub fn finish(self) -> Option<ReadersRaw> {
        self.stop.request();
        self.handle.join().ok().flatten()
    }
}
