//! What cli adds to every report's provenance: this build's version and
//! `--root` as the user typed it.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use numasleuth_kernel::Root;
use numasleuth_report::provenance::Provenance;

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

/// The provenance of a report made now from `root` (the application
/// layer's `provenance::read`), with `--root` as the user typed it.
pub fn read(root: &Root) -> Provenance {
    numasleuth_app::provenance::read(root, &version(), ROOT_ARGUMENT.get().map(PathBuf::as_path))
}
