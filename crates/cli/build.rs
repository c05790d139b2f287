//! Stamps the git commit into the binary (`--version`, report
//! provenance) when it is built from a checkout; a build from a source
//! archive has no commit and says only the version.

use std::process::Command;

fn main() {
    let git = |args: &[&str]| {
        Command::new("git")
            .args(args)
            .output()
            .ok()
            .filter(|o| o.status.success())
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
    };
    // The commit built on; local changes on top of it are not marked (that
    // would need a rebuild check on every file).
    let stamp = git(&["rev-parse", "--short=12", "HEAD"]).unwrap_or_default();
    println!("cargo:rustc-env=NUMASLEUTH_GIT_COMMIT={stamp}");
    let version = env!("CARGO_PKG_VERSION");
    let long = if stamp.is_empty() {
        version.to_string()
    } else {
        format!("{version} (git {stamp})")
    };
    println!("cargo:rustc-env=NUMASLEUTH_LONG_VERSION={long}");
    if let Some(git_dir) = git(&["rev-parse", "--git-dir"]) {
        println!("cargo:rerun-if-changed={git_dir}/HEAD");
        if let Some(head_ref) = git(&["symbolic-ref", "-q", "HEAD"]) {
            println!("cargo:rerun-if-changed={git_dir}/{head_ref}");
        }
    }
}
