//! fuzz/ is its own workspace with its own lock file. A dependency added to
//! any crate the harnesses use must be locked there too, or CI's
//! `scripts/fuzz` stops at `cargo fetch --locked`. Caught here first.
//!
//! The check runs offline, so it needs the fuzz workspace's dependencies in
//! the cargo registry cache: `scripts/test-all` fetches them before the
//! tests (`cargo fetch --locked --manifest-path fuzz/Cargo.toml`). A machine
//! that has not fetched them gets a message saying so, not "stale".

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Output;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// `cargo metadata --locked --offline` on a fuzz workspace manifest.
fn locked_metadata(manifest: &Path) -> Output {
    std::process::Command::new(env!("CARGO"))
        .args([
            "metadata",
            "--locked",
            "--offline",
            "--format-version",
            "1",
            "--manifest-path",
        ])
        .arg(manifest)
        .output()
        .expect("cargo runs")
}

/// Offline resolution found a package missing from the registry cache:
/// nothing fetched the fuzz workspace, which says nothing about its lock.
fn not_fetched(stderr: &str) -> bool {
    stderr.contains("no matching package") || stderr.contains("failed to download")
}

const FETCH_HINT: &str = "run `cargo fetch --locked --manifest-path fuzz/Cargo.toml` first (scripts/test-all does)";

#[test]
fn the_fuzz_lock_file_is_current() {
    let output = locked_metadata(&repo().join("fuzz/Cargo.toml"));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        !not_fetched(&stderr),
        "the fuzz workspace's dependencies are not in the cargo cache: {FETCH_HINT}: {stderr}"
    );
    assert!(
        output.status.success(),
        "fuzz/Cargo.lock is stale; run `cargo metadata --manifest-path fuzz/Cargo.toml` and commit it: {stderr}"
    );
}

/// The check above can fail: a copy of the fuzz workspace whose lock lacks
/// one of its dependencies (libfuzzer-sys, as if just added to a harness)
/// is refused because the lock would have to change.
#[test]
fn a_dependency_missing_from_the_fuzz_lock_file_fails_the_check() {
    let fuzz = repo().join("fuzz");
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("stale-fuzz-lock");
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(&dir).unwrap();
    let crates = fs::canonicalize(repo().join("crates")).unwrap();
    let manifest = fs::read_to_string(fuzz.join("Cargo.toml")).unwrap();
    assert!(
        manifest.contains("\"../crates/"),
        "fuzz/Cargo.toml names its path dependencies differently now"
    );
    let manifest = manifest.replace("\"../crates/", &format!("\"{}/", crates.display()));
    fs::write(dir.join("Cargo.toml"), manifest).unwrap();
    // The [[bin]] targets must exist for cargo to read the manifest.
    let targets = dir.join("fuzz_targets");
    fs::create_dir_all(&targets).unwrap();
    for entry in fs::read_dir(fuzz.join("fuzz_targets")).unwrap() {
        let path = entry.unwrap().path();
        fs::copy(&path, targets.join(path.file_name().unwrap())).unwrap();
    }
    let lock = fs::read_to_string(fuzz.join("Cargo.lock")).unwrap();
    let entries: Vec<&str> = lock.split("\n[[package]]\n").collect();
    let kept: Vec<&str> = entries
        .iter()
        .copied()
        .filter(|entry| !entry.starts_with("name = \"libfuzzer-sys\"\n"))
        .collect();
    assert_eq!(
        kept.len() + 1,
        entries.len(),
        "fuzz/Cargo.lock has no libfuzzer-sys entry to take out"
    );
    fs::write(dir.join("Cargo.lock"), kept.join("\n[[package]]\n")).unwrap();

    let output = locked_metadata(&dir.join("Cargo.toml"));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!not_fetched(&stderr), "{FETCH_HINT}: {stderr}");
    assert!(
        !output.status.success(),
        "a lock file without libfuzzer-sys passed the check"
    );
    assert!(
        stderr.contains("--locked"),
        "refused for another reason than the lock: {stderr}"
    );
}
