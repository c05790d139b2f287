//! The provenance every report carries: this numasleuth, the time, and
//! the machine the data came from (the live one, or the snapshot's, with
//! the snapshot's manifest).

use std::path::Path;
use std::time::{SystemTime, UNIX_EPOCH};

use numasleuth_kernel::error::quote;
use numasleuth_kernel::procfs::host;
use numasleuth_kernel::snapshot::manifest::parse_origin;
use numasleuth_kernel::snapshot::MANIFEST;
use numasleuth_kernel::Root;
use numasleuth_report::provenance::{utc, Provenance, SnapshotOrigin};

fn origin(root: &Root, typed_root: Option<&Path>) -> SnapshotOrigin {
    let manifest = root.read(MANIFEST).map(|text| parse_origin(&text)).unwrap_or_default();
    let created = manifest.created_unix_s;
    SnapshotOrigin {
        path: typed_root.unwrap_or(root.base()).display().to_string(),
        created_unix_s: created,
        created_utc: created.map(utc),
        numasleuth_version: manifest.numasleuth_version.as_deref().map(quote),
    }
}

/// The provenance of a report made now from `root`, by numasleuth
/// `version`. `typed_root` is `--root` as the user typed it (an archive is
/// read from a temporary copy, whose name means nothing to them). The
/// machine's names are quoted: a snapshot is untrusted, so no control
/// character reaches a terminal or the HTML.
pub fn read(root: &Root, version: &str, typed_root: Option<&Path>) -> Provenance {
    let now = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs());
    let snapshot = (!root.is_live()).then(|| origin(root, typed_root));
    Provenance {
        numasleuth_version: version.to_string(),
        generated_unix_s: now,
        generated_utc: utc(now),
        hostname: host::hostname(root).map(|name| quote(&name)),
        kernel_release: host::kernel_release(root).map(|release| quote(&release)),
        source: if snapshot.is_some() { "snapshot" } else { "live" },
        snapshot,
        run: None,
    }
}
