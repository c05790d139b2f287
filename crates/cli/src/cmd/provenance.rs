//! Builds the provenance every doctor and topo report carries: this
//! numasleuth, the time, and the machine the data came from (the live one,
//! or the snapshot's, with the snapshot's manifest).

use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::{SystemTime, UNIX_EPOCH};

use numasleuth_kernel::error::quote;
use numasleuth_kernel::snapshot::manifest::parse_origin;
use numasleuth_kernel::snapshot::MANIFEST;
use numasleuth_kernel::Root;
use numasleuth_report::provenance::{utc, Provenance, SnapshotOrigin};

/// The `--root` path as the user typed it (an archive is read from a
/// temporary copy, whose name means nothing to them).
static ROOT_ARGUMENT: OnceLock<PathBuf> = OnceLock::new();

pub fn remember_root(path: &Path) {
    let _ = ROOT_ARGUMENT.set(path.to_path_buf());
}

/// This build: the version, and the git commit when built from a checkout.
pub fn version() -> String {
    env!("NUMASLEUTH_LONG_VERSION").to_string()
}

/// A kernel file's one-line value, made safe to print (a snapshot is
/// untrusted: no control characters reach the terminal or the HTML).
fn one_line(root: &Root, path: &str) -> Option<String> {
    let text = root.read(path).ok()?;
    let value = text.lines().next()?.trim();
    (!value.is_empty()).then(|| quote(value))
}

fn origin(root: &Root) -> SnapshotOrigin {
    let manifest = root.read(MANIFEST).map(|text| parse_origin(&text)).unwrap_or_default();
    let created = manifest.created_unix_s;
    SnapshotOrigin {
        path: ROOT_ARGUMENT
            .get()
            .map_or_else(|| root.base().display().to_string(), |p| p.display().to_string()),
        created_unix_s: created,
        created_utc: created.map(utc),
        numasleuth_version: manifest.numasleuth_version.as_deref().map(quote),
    }
}

pub fn read(root: &Root) -> Provenance {
    let now = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs());
    let snapshot = (!root.is_live()).then(|| origin(root));
    Provenance {
        numasleuth_version: version(),
        generated_unix_s: now,
        generated_utc: utc(now),
        hostname: one_line(root, "proc/sys/kernel/hostname"),
        kernel_release: one_line(root, "proc/sys/kernel/osrelease"),
        source: if snapshot.is_some() { "snapshot" } else { "live" },
        snapshot,
        run: None,
    }
}
