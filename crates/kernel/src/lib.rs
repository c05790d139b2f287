//! Kernel files, parsed.
//!
//! Each module owns one kernel file or directory: a pure `parse` that can be
//! tested on pasted captures, and a reader that takes a [`Root`] so the same
//! code reads the live system, a fixture tree, or a snapshot.

pub mod atomic_write;
pub mod cgroup;
pub mod cpulist;
pub mod error;
pub mod gather;
pub mod human_list;
mod live_open;
pub mod memory_sample;
pub mod pages;
pub mod pages_capture;
mod pages_reveal;
pub mod procfs;
pub mod read;
pub mod root;
pub mod safe_text;
pub mod snapshot;
pub mod sysfs;
pub mod task;
#[cfg(any(test, feature = "test-support"))]
pub mod test_support;
pub mod tracefs;
mod tree_dirs;
mod tree_list;
pub mod unread;
pub mod untrusted;

pub use cpulist::IdList;
pub use error::{ParseError, ReadError};
pub use human_list::human_list;
pub use root::Root;
pub use unread::{Gaps, Unread};
