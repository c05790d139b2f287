//! The snapshot archive's format, apart from what a snapshot means.
//!
//! A `.tar.gz` snapshot is hostile input: anyone can hand one to
//! `--root`. Reading one ([`Archive`]) checks it whole first without
//! writing anything (gzip CRCs, every cap in [`limits`], every path), then
//! unpacks it into a directory the caller made, through descriptors that
//! never follow a link an entry made (`extract.rs`).
//! Writing one ([`write_tree`]) turns a directory tree into a `.tar.gz`
//! whose every byte is checked when it is read back.
//!
//! What a snapshot holds (the manifest, the recording a run made, the
//! temporary directory's life and its removal on a signal) is kernel's
//! `snapshot` module, which calls this crate; this one knows only files,
//! directories, links and caps, and so has no use for a `Root`.

mod error;
mod extract;
mod gzip;
pub mod limits;
mod read;
#[cfg(any(test, feature = "test-support"))]
pub mod test_archive;
mod untar;
mod write;

pub use error::{Error, Problem};
pub use limits::Caps;
pub use read::Archive;
pub use write::{is_archive_name, write_tree, WriteError};

#[cfg(test)]
mod hostile_gzip_tests;
#[cfg(test)]
mod hostile_tests;
#[cfg(test)]
mod prop_tests;
#[cfg(test)]
mod scratch_tests;
#[cfg(test)]
mod tests;
