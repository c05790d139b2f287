//! Why a command could not be found or forked for `pmu`, kept beside
//! [`super::spawn`] so that file stays about forking. The I/O errors are
//! fields, not `#[source]`s: their text is in the message already, and
//! `{:#}` would print it twice.

use thiserror::Error;

/// Why a command name names no program to run; `shown` is the name as
/// typed (lossily UTF-8).
#[derive(Debug, Error)]
pub enum ResolveError {
    #[error("the command is empty")]
    Empty,
    #[error("`{shown}` is a directory")]
    Directory { shown: String },
    #[error("`{shown}` is not executable")]
    NotExecutable { shown: String },
    #[error("`{shown}`: {error}")]
    Unreadable { shown: String, error: std::io::Error },
    #[error("command `{shown}` not found in PATH")]
    NotFound { shown: String },
}

/// Why the stopped child could not be made.
#[derive(Debug, Error)]
pub enum ForkError {
    #[error("an argument contains a NUL byte")]
    NulByte,
    #[error("pipe: {0}")]
    Pipe(std::io::Error),
    #[error("fork: {0}")]
    Fork(std::io::Error),
}
