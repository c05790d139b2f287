//! The exporter's `numasleuth_lock_file_opens_total{file, comm}`: opens of the
//! lock-taking kernel files since the exporter started, counted by a
//! thread of their own.
//!
//! Only where it is cheap: kprobes (other opens cost nothing), or the open
//! tracepoints with the in-kernel name filter on the two allocator-lock
//! files (every open pays a name comparison per watched file). Never the
//! /proc/*/fd scan, which would read every process's fd directory ten
//! times a second for as long as the exporter runs. Label sets are bounded: past [`MAX_SERIES`] (file, command)
//! pairs, new commands are counted as `other`.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use numasleuth_kernel::Root;
use numasleuth_model::readers::LockFile;
use numasleuth_model::stop::Stop;
use numasleuth_probe::readers::error::{SpawnError, StartError};
use numasleuth_probe::readers::{on_thread, Choice, Origin, Session, Setup, DRAIN};
use thiserror::Error;

/// (file, command) series at most.
pub const MAX_SERIES: usize = 256;

type Counts = Arc<Mutex<BTreeMap<(LockFile, String), u64>>>;

pub struct LockOpens {
    counts: Counts,
    method: &'static str,
    files: Vec<LockFile>,
}

/// Why the online CPUs are not known: the caller's own error chain, as one
/// line (it comes from the CLI's topology read).
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("{0}")]
pub struct CpusUnknown(pub String);

/// Neither cheap method could start. `kprobe` says `kprobe: ` itself, so
/// the line reads `kprobe: kprobe: …`, as it always has. Boxed: two
/// reasons side by side would make every `Result` carrying them large.
#[derive(Debug, Error)]
#[error("kprobe: {kprobe}; {tracepoint}")]
pub struct NoCheapSession {
    pub kprobe: Box<StartError>,
    pub tracepoint: Box<StartError>,
}

/// Why the metric is left out.
#[derive(Debug, Error)]
pub enum LockOpensError {
    #[error(transparent)]
    Cpus(#[from] CpusUnknown),
    #[error(transparent)]
    Start(#[from] SpawnError<NoCheapSession>),
}

/// Whether the metric is exported and why, for one line on stderr.
pub type Status = Result<LockOpens, LockOpensError>;

impl LockOpens {
    /// Starts counting on `cpus` (the online CPUs, or why they are not
    /// known) until `stop` is requested, or says why the metric is left out.
    pub fn start(root: &Root, cpus: Result<Vec<u32>, CpusUnknown>, stop: &Stop) -> Status {
        let cpus = cpus?;
        let counts: Counts = Arc::default();
        let shared = Arc::clone(&counts);
        let (root, stop) = (root.clone(), stop.clone());
        let started = on_thread::spawn(
            "lock-file opens",
            move || cheap_session(&root, cpus),
            move |session| count(session, &shared, &stop),
        )?;
        Ok(LockOpens {
            counts,
            method: started.method.name(),
            files: started.files,
        })
    }

    /// The line `serve` prints about the metric.
    pub fn describe(status: &Status) -> String {
        match status {
            Ok(opens) => format!(
                "counting opens of {} by {} (numasleuth_lock_file_opens_total)",
                opens.files.iter().map(|f| f.path()).collect::<Vec<_>>().join(", "),
                opens.method
            ),
            Err(why) => format!("numasleuth_lock_file_opens_total not exported: {why}"),
        }
    }

    /// `(file, comm, opens)` for the exposition.
    pub fn snapshot(&self) -> Vec<(String, String, u64)> {
        let counts = self.counts.lock().unwrap_or_else(|e| e.into_inner());
        counts
            .iter()
            .map(|((file, comm), n)| (file.name().to_string(), comm.clone(), *n))
            .collect()
    }
}

/// With the tracepoint, every open of the machine pays one in-kernel name
/// comparison per watched file (about 0.3 µs each on this project's VM,
/// docs/readers.md), for as long as the exporter runs: only the two files
/// whose reads take the allocator's own locks are watched then.
const TRACEPOINT_FILES: [LockFile; 2] = [LockFile::Slabinfo, LockFile::Pagetypeinfo];

/// A kprobe on every file (other opens cost nothing), else the filtered
/// tracepoint on [`TRACEPOINT_FILES`]; never the fd scan.
fn cheap_session(root: &Root, cpus: Vec<u32>) -> Result<Session, NoCheapSession> {
    let setup = |choice, files: &[LockFile]| Setup {
        files: files.to_vec(),
        cpus: cpus.clone(),
        choice,
        scan_interval: Duration::from_millis(100),
    };
    Session::start(root, &setup(Choice::Kprobe, &LockFile::ALL), Origin::now()).or_else(|no_kprobe| {
        Session::start(root, &setup(Choice::Tracepoint, &TRACEPOINT_FILES), Origin::now()).map_err(|tracepoint| {
            NoCheapSession {
                kprobe: Box::new(no_kprobe),
                tracepoint: Box::new(tracepoint),
            }
        })
    })
}

/// Counts for as long as the exporter runs.
fn count(mut session: Session, counts: &Counts, stop: &Stop) {
    while !stop.requested() {
        session.wait(DRAIN);
        for open in session.poll() {
            let comm = numasleuth_kernel::error::quote(&session.comm(open.pid));
            let mut counts = counts.lock().unwrap_or_else(|e| e.into_inner());
            let key = if counts.len() < MAX_SERIES || counts.contains_key(&(open.file, comm.clone())) {
                (open.file, comm)
            } else {
                (open.file, "other".to_string())
            };
            *counts.entry(key).or_insert(0) += 1;
        }
    }
}
