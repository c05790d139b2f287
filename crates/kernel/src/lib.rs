//! Kernel files, read.
//!
//! Each module owns one kernel file or directory: its format, types and
//! pure parser live in `numasleuth-parse` (re-exported here at the same
//! path), and its reader here takes a [`Root`] so the same code reads the
//! live system, a fixture tree, or a snapshot.

pub mod atomic_write;
pub mod cgroup;
pub mod cleanup;
pub mod gather;
pub mod identity;
mod live_open;
pub mod memory_sample;
pub mod output_file;
pub mod pages;
pub mod pages_capture;
mod pages_reveal;
pub mod procfs;
pub mod read;
pub mod root;
pub mod snapshot;
pub mod sysfs;
pub mod task;
#[cfg(any(test, feature = "test-support"))]
pub mod test_support;
mod tree_dirs;
mod tree_list;
pub mod untrusted;

pub use numasleuth_parse::{cpulist, error, human_list, safe_text, tracefs, unread};

pub use cpulist::IdList;
pub use error::{ParseError, ReadError};
pub use root::Root;
pub use unread::{Gaps, Unread};
