//! `numasleuth snapshot -o PATH`: replay every reader under a recording
//! root and write out exactly what they read.

use std::process::ExitCode;
use std::time::{SystemTime, UNIX_EPOCH};

use anyhow::Context;
use numasleuth_kernel::snapshot::manifest::{self, Manifest};
use numasleuth_kernel::{snapshot, Root};

use crate::cli::SnapshotArgs;

pub fn run(root: &Root, args: &SnapshotArgs) -> anyhow::Result<ExitCode> {
    let (recording_root, recording) = root.clone().recording();
    // Every command's static readers run here, so a snapshot can answer
    // every command offline. Reading errors are fatal: a snapshot that
    // silently lacks a file would mislead whoever analyses it later.
    super::host(&recording_root)?;
    // The machine's name and kernel go into the tree too, so a report read
    // from the snapshot says whose it is.
    let provenance = super::provenance::read(&recording_root);
    let created_unix_s = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    let manifest = Manifest {
        command_line: std::env::args().collect(),
        created_unix_s,
        hostname: provenance.hostname,
        kernel_release: provenance.kernel_release,
        numasleuth_version: env!("CARGO_PKG_VERSION").to_string(),
        schema: manifest::SCHEMA,
        source: root.base().display().to_string(),
        uname: manifest::uname(),
    };
    let recording = recording.lock().unwrap_or_else(|p| p.into_inner()).clone();
    let summary = snapshot::write(&recording, &manifest.to_json(), &args.output)
        .with_context(|| format!("cannot write snapshot {}", args.output.display()))?;
    say!(
        "numasleuth: wrote {} ({} files, {} links, {} bytes of kernel data)",
        args.output.display(),
        summary.files,
        summary.symlinks,
        summary.bytes
    );
    Ok(ExitCode::SUCCESS)
}
