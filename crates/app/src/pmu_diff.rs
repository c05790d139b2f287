//! `pmu diff`: two `pmu --json` files read and every event ranked by how
//! much it changed (`analyze::pmu::diff`).
//!
//! The files are untrusted input: each must be a regular file (a FIFO or
//! device is refused without blocking on it), at most 16 MiB (a real one
//! is a few hundred KiB even with thousands of events), and of schema
//! `numasleuth.pmu/1`.

use std::path::{Path, PathBuf};

use numasleuth_analyze::pmu::diff::{diff, Per, RunCounts};
use numasleuth_analyze::pmu::diff_document::{ComparedRun, DiffDocument};
use numasleuth_kernel::untrusted;
use numasleuth_report::pmu_json;

pub const MAX_FILE_BYTES: u64 = 16 << 20;

/// What `pmu diff` is asked, with no clap in it.
pub struct DiffRequest {
    /// The good run's `pmu --json` (A).
    pub good: PathBuf,
    /// The bad run's (B).
    pub bad: PathBuf,
    pub per: Per,
    /// Events counted fewer times than this in both runs are left out.
    pub min_count: f64,
}

/// Why the runs could not be compared; each a line naming the file.
#[derive(Debug, thiserror::Error)]
pub enum DiffError {
    #[error("{side} {}: {why}", path.display())]
    Unreadable {
        side: &'static str,
        path: PathBuf,
        why: String,
    },
    #[error("{why} (A is GOOD {}, B is BAD {})", good.display(), bad.display())]
    Incomparable { why: String, good: PathBuf, bad: PathBuf },
}

/// Reads both files and ranks every event by its change.
pub fn run(request: &DiffRequest) -> Result<DiffDocument, DiffError> {
    let good = load(&request.good, "GOOD")?;
    let bad = load(&request.bad, "BAD")?;
    let result = diff(&good, &bad, &request.per, request.min_count).map_err(|why| DiffError::Incomparable {
        why: why.to_string(),
        good: request.good.clone(),
        bad: request.bad.clone(),
    })?;
    let compared = |path: &Path, run: &RunCounts| ComparedRun {
        file: path.display().to_string(),
        duration_s: run.duration_s,
    };
    Ok(DiffDocument {
        a: compared(&request.good, &good),
        b: compared(&request.bad, &bad),
        diff: result,
    })
}

fn load(path: &Path, side: &'static str) -> Result<RunCounts, DiffError> {
    read_document(path)
        .and_then(|text| pmu_json::parse(&text).map_err(|e| e.to_string()))
        .map_err(|why| DiffError::Unreadable {
            side,
            path: path.to_path_buf(),
            why,
        })
}

/// The file's text, or why it is not one `pmu diff` reads: only a regular
/// file (a FIFO would block), at most 16 MiB.
fn read_document(path: &Path) -> Result<String, String> {
    let (file, meta) = untrusted::open_regular(path, true).map_err(|e| e.to_string())?;
    let bytes = untrusted::read_capped(file, meta.len(), MAX_FILE_BYTES)
        .map_err(|e| format!("{e} (no numasleuth.pmu/1 file is that large)"))?;
    String::from_utf8(bytes).map_err(|_| "is not UTF-8 text, so not JSON".to_string())
}
