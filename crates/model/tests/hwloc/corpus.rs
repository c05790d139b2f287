//! Finding hwloc's captures and unpacking them. The captures live in a
//! shared folder outside the repository, each `NAME.tar.bz2` with an optional
//! `NAME.console` and `NAME.test` beside it; this module is the only place
//! that knows that layout and how to unpack an archive quickly.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

const FIXTURES_ENV: &str = "NUMASLEUTH_HWLOC_FIXTURES";

pub(crate) struct Capture {
    pub(crate) name: String,
    pub(crate) tarball: PathBuf,
    pub(crate) console: Option<PathBuf>,
    pub(crate) test: Option<PathBuf>,
}

pub(crate) fn list_captures(dir: &Path) -> Vec<Capture> {
    let mut captures: Vec<Capture> = fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .filter_map(|entry| {
            let file_name = entry.ok()?.file_name().to_string_lossy().into_owned();
            let name = file_name.strip_suffix(".tar.bz2")?.to_string();
            let sibling = |ext: &str| Some(dir.join(format!("{name}.{ext}"))).filter(|p| p.is_file());
            Some(Capture {
                tarball: dir.join(&file_name),
                console: sibling("console"),
                test: sibling("test"),
                name,
            })
        })
        .collect();
    captures.sort_by(|a, b| a.name.cmp(&b.name));
    captures
}

pub(crate) fn fixtures_dir() -> Option<PathBuf> {
    let dir = match std::env::var_os(FIXTURES_ENV) {
        Some(dir) => PathBuf::from(dir),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/fixtures/hwloc"),
    };
    dir.is_dir().then_some(dir)
}

/// Unpacks with the system `tar` into a fresh temporary folder and returns
/// the single top folder the archive holds, whatever its name.
pub(crate) fn unpack(tarball: &Path) -> Result<(tempfile::TempDir, PathBuf), String> {
    let scratch = scratch_dir().map_err(|e| format!("cannot create a temporary folder: {e}"))?;
    let output = Command::new("tar")
        .arg("-xjf")
        .arg(tarball)
        .arg("-C")
        .arg(scratch.path())
        .output()
        .map_err(|e| format!("cannot run tar: {e}"))?;
    if !output.status.success() {
        return Err(format!(
            "tar -xjf {} failed: {}",
            tarball.display(),
            String::from_utf8_lossy(&output.stderr).trim()
        ));
    }
    let entries: Vec<PathBuf> = fs::read_dir(scratch.path())
        .map_err(|e| e.to_string())?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .collect();
    match entries.as_slice() {
        [only] if only.is_dir() => {
            let only = only.clone();
            Ok((scratch, only))
        }
        _ => Err(format!(
            "{} should unpack to one folder, got {:?}",
            tarball.display(),
            entries
        )),
    }
}

/// Each capture is thousands of tiny files; on a disk-backed `/tmp` creating
/// them dominates the run (about 9 s for the largest capture here, against
/// 0.5 s on tmpfs), so use `/dev/shm` unless the user chose a `TMPDIR`.
fn scratch_dir() -> std::io::Result<tempfile::TempDir> {
    let mut builder = tempfile::Builder::new();
    builder.prefix("numasleuth-hwloc-");
    let shm = Path::new("/dev/shm");
    if std::env::var_os("TMPDIR").is_none() && shm.is_dir() {
        if let Ok(dir) = builder.tempdir_in(shm) {
            return Ok(dir);
        }
    }
    builder.tempdir()
}
