//! `snapshot`: every reader replayed under a recording root, and what
//! they read written out as one archive; for each process named, also
//! what `inspect`, `lines -p` and `doctor -p` read of it, the per-page
//! answers, and each mapped object's path and build-id. Recording through
//! the same `Root` that `--root` replays is what makes replay exact.

use std::path::PathBuf;
use std::time::{SystemTime, UNIX_EPOCH};

use numasleuth_kernel::error::quote;
use numasleuth_kernel::procfs::host;
use numasleuth_kernel::procfs::process::ProcessError;
use numasleuth_kernel::snapshot::manifest::{self, Manifest};
use numasleuth_kernel::snapshot::{self, SnapshotSummary};
use numasleuth_kernel::{ReadError, Root};
use numasleuth_model::Topology;
use numasleuth_symbols::captured;

use crate::env::TopologyError;
use crate::Observer;

/// What `snapshot` is asked, with no clap in it.
pub struct SnapshotRequest {
    /// The processes to capture, each checked to exist
    /// (`process_ref::existing_pids`).
    pub pids: Vec<u32>,
    /// The archive to write.
    pub output: PathBuf,
    /// The command line that took it, kept in the manifest.
    pub command_line: Vec<String>,
}

/// Why no snapshot was written.
#[derive(Debug, thiserror::Error)]
pub enum SnapshotError {
    #[error(transparent)]
    Topology(#[from] TopologyError),
    #[error("cannot capture process {pid}")]
    Capture {
        pid: u32,
        #[source]
        cause: CaptureError,
    },
    #[error("cannot write snapshot {}", output.display())]
    Write {
        output: PathBuf,
        #[source]
        cause: ReadError,
    },
}

/// Why one process could not be read into the snapshot.
#[derive(Debug, thiserror::Error)]
pub enum CaptureError {
    #[error(transparent)]
    Process(#[from] ProcessError),
    #[error(transparent)]
    Read(#[from] ReadError),
}

/// Records every reader's files, and the processes', then writes the
/// archive; what the topology read could not use is said to `observer` as
/// warnings. Reading errors are fatal: a snapshot that silently lacks a
/// file would mislead whoever analyses it later.
pub fn record(
    root: &Root,
    request: &SnapshotRequest,
    observer: &dyn Observer,
) -> Result<SnapshotSummary, SnapshotError> {
    let (recording_root, recording) = root.clone().recording();
    // Every command's static readers run here, so a snapshot can answer
    // every command offline.
    let read = crate::env::read_degraded(&recording_root)?;
    for warning in &read.warnings {
        observer.progress(&format!("numasleuth: warning: {warning}"));
    }
    numasleuth_kernel::gather::read_host(&recording_root, &read.readings);
    for &pid in &request.pids {
        capture(&recording_root, pid, &read.topology).map_err(|cause| SnapshotError::Capture { pid, cause })?;
    }
    // The machine's name and kernel go into the tree too, so a report read
    // from the snapshot says whose it is.
    let hostname = host::hostname(&recording_root).map(|name| quote(&name));
    let kernel_release = host::kernel_release(&recording_root).map(|release| quote(&release));
    let created_unix_s = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    let manifest = Manifest {
        // Page counts in the captured files are in this unit; replay reads
        // it back (`pages::base_page_bytes`) instead of assuming 4 KiB.
        base_page_bytes: numasleuth_kernel::pages::base_page_bytes(root),
        command_line: request.command_line.clone(),
        created_unix_s,
        hostname,
        kernel_release,
        numasleuth_version: env!("CARGO_PKG_VERSION").to_string(),
        schema: manifest::SCHEMA,
        source: root.base().display().to_string(),
        uname: manifest::uname(),
    };
    let recording = recording.lock().unwrap_or_else(|p| p.into_inner()).clone();
    snapshot::write(&recording, &manifest.to_json(), &request.output).map_err(|cause| SnapshotError::Write {
        output: request.output.clone(),
        cause,
    })
}
/// Reads process `pid` through the recording root the way `inspect`,
/// `lines -p` and `doctor -p` do, so a replay finds every file they read,
/// and keeps each mapped object's path and build-id.
fn capture(recording_root: &Root, pid: u32, topology: &Topology) -> Result<(), CaptureError> {
    let (_, objects) = crate::process::model_and_objects(recording_root, pid, false, topology)?;
    for file in ["status", "comm", "cmdline"] {
        recording_root.read_optional(&format!("proc/{pid}/{file}"))?;
    }
    // An object without a build-id cannot be recognised later, so it is
    // left out (a replay then says its sections are unknown).
    let ids: Vec<(String, Vec<u8>)> = objects
        .objects
        .iter()
        .filter(|o| !o.source.shown.ends_with(" (deleted)"))
        .filter_map(|o| Some((o.path.clone(), o.source.build_id()?)))
        .collect();
    let elf = ids.iter().map(|(path, id)| (path.as_str(), Some(id.as_slice())));
    let other = objects.not_elf.iter().map(|path| (path.as_str(), None));
    let list = captured::format(elf.chain(other));
    recording_root.record_made(&captured::path(pid), list.into_bytes());
    Ok(())
}
