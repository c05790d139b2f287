//! `/proc/PID/numa_maps`: the format, types and parser are
//! `numasleuth_parse::procfs::numa_maps`; streaming it from a process is
//! `numa_maps_read`.

pub use numasleuth_parse::procfs::numa_maps::*;

pub use super::numa_maps_read::{NumaMapsEntries, NumaMapsFile};
