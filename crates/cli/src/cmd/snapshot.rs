//! `numasleuth snapshot -o PATH`: replay every reader under a recording
//! root and write out exactly what they read.

use std::process::ExitCode;
use std::time::{SystemTime, UNIX_EPOCH};

use anyhow::Context;
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
    let manifest = serde_json::json!({
        "schema": "numasleuth.snapshot/1",
        "numasleuth_version": env!("CARGO_PKG_VERSION"),
        "created_unix_s": created_unix_s,
        "source": root.base().display().to_string(),
        "hostname": provenance.hostname,
        "kernel_release": provenance.kernel_release,
        "uname": uname(),
        "command_line": std::env::args().collect::<Vec<_>>(),
    });
    let recording = recording.lock().unwrap_or_else(|p| p.into_inner()).clone();
    let summary = snapshot::write(&recording, &serde_json::to_string_pretty(&manifest)?, &args.output)
        .with_context(|| format!("cannot write snapshot {}", args.output.display()))?;
    eprintln!(
        "numasleuth: wrote {} ({} files, {} links, {} bytes of kernel data)",
        args.output.display(),
        summary.files,
        summary.symlinks,
        summary.bytes
    );
    Ok(ExitCode::SUCCESS)
}

/// `uname -a`'s fields, from the kernel (not from the tree being recorded).
fn uname() -> serde_json::Value {
    // SAFETY: utsname is plain old data; uname fills it or fails.
    let mut u: libc::utsname = unsafe { std::mem::zeroed() };
    // SAFETY: `u` is a valid, writable utsname.
    if unsafe { libc::uname(&mut u) } != 0 {
        return serde_json::Value::Null;
    }
    let field = |chars: &[libc::c_char]| {
        let bytes: Vec<u8> = chars.iter().take_while(|&&c| c != 0).map(|&c| c as u8).collect();
        String::from_utf8_lossy(&bytes).into_owned()
    };
    serde_json::json!({
        "sysname": field(&u.sysname),
        "nodename": field(&u.nodename),
        "release": field(&u.release),
        "version": field(&u.version),
        "machine": field(&u.machine),
    })
}
