//! What each fuzz target does with its input, and what it checks.
//!
//! The targets under `fuzz/` (a cargo-fuzz-layout crate outside the
//! workspace, built by scripts/fuzz) are
//! one-line wrappers around these functions. Keeping the bodies here, in a
//! workspace crate, means the ordinary `cargo test` replays every saved
//! crasher (`fuzz/regressions/TARGET/*`) and seed (`fuzz/seeds/TARGET/*`)
//! through exactly the code libFuzzer ran, on the stable compiler and
//! without a fuzzing build.
//!
//! A harness never returns an error: inputs the parsers reject are fine.
//! It panics only when a parser panics or breaks an invariant that is cheap
//! to state (a CPU list prints back to itself, a join matches the files it
//! joined), which is what libFuzzer reports as a crash.

use std::borrow::Cow;

pub mod cpulist;
pub mod elf;
pub mod interrupts;
pub mod journal;
pub mod maps;
pub mod numa_maps;
pub mod procfs;
pub mod snapshot;
pub mod sysfs;
pub mod tracepoint;
pub mod zoneinfo;

/// A harness: one input, checked; panics on a bug.
pub type Harness = fn(&[u8]);

/// Every fuzz target by name, as `fuzz/fuzz_targets/NAME.rs` and the
/// folders under `fuzz/seeds/` and `fuzz/regressions/` name it.
pub const TARGETS: [(&str, Harness); 11] = [
    ("cpulist", cpulist::run),
    ("procfs_parsers", procfs::run),
    ("sysfs_parsers", sysfs::run),
    ("numa_maps", numa_maps::run),
    ("zoneinfo", zoneinfo::run),
    ("interrupts", interrupts::run),
    ("maps", maps::run),
    ("journal", journal::run),
    ("snapshot_archive", snapshot::run),
    ("elf_symbols", elf::run),
    ("tracepoint", tracepoint::run),
];

/// The harness of a target, by name.
pub fn harness(name: &str) -> Option<Harness> {
    TARGETS.iter().find(|(n, _)| *n == name).map(|(_, h)| *h)
}

/// Kernel files are read as text with invalid UTF-8 replaced, as
/// [`numasleuth_kernel::Root::read`] callers see them.
pub(crate) fn text(data: &[u8]) -> Cow<'_, str> {
    String::from_utf8_lossy(data)
}

/// One parser of a dispatching target, with the byte that selects it.
pub type Choice<P> = (u8, P);

/// The parser a dispatching target's first byte selects (other bytes pick
/// by `byte % len`, so no input is wasted), and the rest of the input.
pub(crate) fn select<'d, P: Copy>(data: &'d [u8], parsers: &[Choice<P>]) -> Option<(P, &'d [u8])> {
    let (key, rest) = data.split_first()?;
    let parse = parsers
        .iter()
        .find(|(k, _)| k == key)
        .map_or(parsers[usize::from(*key) % parsers.len()].1, |(_, p)| *p);
    Some((parse, rest))
}
