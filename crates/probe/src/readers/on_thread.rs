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

/// Whether `probe-latency` records readers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Want {
    /// `--readers`: fail when it cannot.
    Required,
    /// The default as root: record when possible, else say why.
    IfPossible,
    /// `--no-readers`, or not root.
    No,
}

impl Want {
    pub fn from_flags(readers: bool, no_readers: bool) -> Want {
        // SAFETY: geteuid has no preconditions and cannot fail.
        let root = unsafe { libc::geteuid() } == 0;
        match (readers, no_readers) {
            (_, true) => Want::No,
            (true, false) => Want::Required,
            (false, false) if root => Want::IfPossible,
            (false, false) => Want::No,
        }
    }
}

/// Starts recording for a probe of `duration` from `origin`: the recorder,
/// or why none runs (`Err` only when `--readers` insisted).
pub fn for_probe(
    root: &Root,
    want: Want,
    origin: Origin,
    duration: Duration,
) -> anyhow::Result<(Option<Recorder>, Option<String>)> {
    if want == Want::No {
        return Ok((
            None,
            Some("not recorded (--no-readers, or not root; --readers asks for it)".into()),
        ));
    }
    let files = numasleuth_model::readers::LockFile::ALL.to_vec();
    let setup = super::readers::setup(root, files, super::readers_args::ReadersMethod::Auto)?;
    // The probe may overrun its duration while the last operations finish.
    match Recorder::start(root.clone(), setup, origin, duration + Duration::from_secs(60)) {
        Ok((recorder, method)) => {
            say!("numasleuth: recording lock-file readers by {}", method.name());
            Ok((Some(recorder), None))
        }
        Err(why) if want == Want::Required => anyhow::bail!("--readers: {why}"),
        Err(why) => Ok((None, Some(format!("not recorded: {why}")))),
    }
}
