//! Processes found by name (`numasleuth_kernel::procfs::processes`), e.g. a
//! running irqbalance that would undo a manual IRQ affinity fix within
//! seconds.

/// How the unreadable `comm` files of `find_by_comm` are named.
pub const COMM_PATTERN: &str = "/proc/[pid]/comm";
