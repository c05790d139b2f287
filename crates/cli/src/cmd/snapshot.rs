//! `numasleuth snapshot -o PATH [-p PID|NAME…]`: replay every reader under
//! a recording root and write out exactly what they read; with `-p`, also
//! what `inspect`, `lines -p` and `doctor -p` read of those processes, the
//! per-page answers, and each mapped object's path and build-id.

use std::process::ExitCode;
use std::time::{SystemTime, UNIX_EPOCH};

use anyhow::Context;

use numasleuth_kernel::snapshot::manifest::{self, Manifest};
use numasleuth_kernel::{snapshot, Root};
use numasleuth_model::Topology;
use numasleuth_symbols::captured;

use crate::cli::SnapshotArgs;

pub fn run(root: &Root, args: &SnapshotArgs) -> anyhow::Result<ExitCode> {
    // Names were resolved on the plain root (in main), so the snapshot does
    // not keep every process's comm that was looked at.
    let pids = numasleuth_app::process_ref::existing_pids(root, &args.pids)?;
    let (recording_root, recording) = root.clone().recording();
    // Every command's static readers run here, so a snapshot can answer
    // every command offline. Reading errors are fatal: a snapshot that
    // silently lacks a file would mislead whoever analyses it later.
    let (topology, _) = super::host(&recording_root)?;
    for &pid in &pids {
        capture(&recording_root, pid, &topology).with_context(|| format!("cannot capture process {pid}"))?;
    }
    // The machine's name and kernel go into the tree too, so a report read
    // from the snapshot says whose it is.
    let provenance = super::provenance::read(&recording_root);
    let created_unix_s = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    let manifest = Manifest {
        // Page counts in the captured files are in this unit; replay reads
        // it back (`pages::base_page_bytes`) instead of assuming 4 KiB.
        base_page_bytes: numasleuth_kernel::pages::base_page_bytes(root),
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
    let held = if pids.is_empty() {
        String::new()
    } else {
        format!(", processes {}", numasleuth_kernel::IdList::new(pids))
    };
    say!(
        "numasleuth: wrote {} ({} files, {} links, {} bytes of kernel data{held})",
        args.output.display(),
        summary.files,
        summary.symlinks,
        summary.bytes
    );
    Ok(ExitCode::SUCCESS)
}

/// Reads process `pid` through the recording root the way `inspect`,
/// `lines -p` and `doctor -p` do, so a replay finds every file they read,
/// and keeps each mapped object's path and build-id.
fn capture(recording_root: &Root, pid: u32, topology: &Topology) -> anyhow::Result<()> {
    let (_, objects) = numasleuth_app::process::model_and_objects(recording_root, pid, false, topology)?;
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
