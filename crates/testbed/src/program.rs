//! Test programs from `tests/victim/*.c`, compiled statically for the
//! guests (their initramfs has no libc).
//!
//! A missing gcc fails the test that asked: `scripts/test-all` installs it,
//! and a guest test that cannot run must never pass.

use std::path::{Path, PathBuf};

use crate::env::Arch;

/// Compiles `tests/victim/SOURCE` for the x86-64 guests; see
/// [`build_static_for`].
pub fn build_static(test_name: &str, source: &str, out: PathBuf, extra_flags: &[&str]) -> PathBuf {
    build_static_for(Arch::X86_64, test_name, source, out, extra_flags)
}

/// Compiles `tests/victim/SOURCE` for `arch` ([`Arch::c_compiler`]) with
/// `-O1 -g -static` and `extra_flags` to `out`, which must be the calling
/// test's own (test binaries build in parallel). Panics, naming
/// `test_name`, when it cannot.
pub fn build_static_for(arch: Arch, test_name: &str, source: &str, out: PathBuf, extra_flags: &[&str]) -> PathBuf {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let gcc = arch.c_compiler();
    let status = std::process::Command::new(gcc)
        .args(["-O1", "-g", "-static"])
        .args(extra_flags)
        .arg(repo.join("tests/victim").join(source))
        .arg("-o")
        .arg(&out)
        .status();
    match status {
        Ok(s) if s.success() => out,
        Ok(s) => panic!("{test_name}: {gcc} -static failed on {source}: {s}"),
        Err(e) => panic!("{test_name}: {gcc} not found ({e}); scripts/test-all installs it"),
    }
}
