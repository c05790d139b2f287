//! `/proc/PID/task/TID/stat` and `sched`: the format, types and parsers
//! are `numasleuth_parse::procfs::task`; the thread list and the reads are
//! `crate::task`.

pub use numasleuth_parse::procfs::task::*;
