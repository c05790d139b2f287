//! The formats of the kernel files numasleuth reads, with no I/O: each
//! module holds one file's (or directory's) types and a pure parser that is
//! tested on pasted captures and fuzzed. `numasleuth-kernel` reads the
//! files (live, from a fixture tree or from a snapshot) and re-exports
//! these modules at the same paths; model, analyze and report depend on
//! this crate alone, so they link no file, archive or system-call code.

#![forbid(unsafe_code)]

pub mod cgroup;
pub mod cpulist;
pub mod error;
pub mod gather;
pub mod human_list;
pub mod memory_sample;
pub mod pages;
pub mod pages_capture;
pub mod procfs;
pub mod read;
pub mod safe_text;
pub mod sysfs;
pub mod tracefs;
pub mod typed;
pub mod unread;

pub use cpulist::IdList;
pub use error::{ParseError, ReadError};
pub use human_list::{consecutive_runs, human_list};
pub use unread::{Gaps, Unread};
