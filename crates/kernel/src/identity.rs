//! Who this process is to the kernel: one place that asks, so every
//! permission decision (output files, snapshots, journals, readers, DAMON's
//! claim, the exporter) uses the same answer.

/// The effective user id, the one the kernel checks permissions against.
pub fn euid() -> u32 {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() }
}

/// Whether this process runs as root (effective uid 0).
pub fn is_root() -> bool {
    euid() == 0
}
