//! Errors that name the kernel file and say why it could not be used.
//!
//! Every reader error carries the path as the user would see it on a live
//! system (`/sys/devices/system/node/node1/distance`), so a message read from
//! a snapshot points at the same file the user would inspect by hand.

use thiserror::Error;

/// Why a kernel file could not be read or understood.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum ReadError {
    #[error("{path}: not found")]
    NotFound { path: String },
    #[error("{path}: permission denied")]
    PermissionDenied { path: String },
    #[error("{path}: {message}")]
    Io { path: String, message: String },
    #[error("{path}: malformed: {message}")]
    Malformed { path: String, message: String },
}

impl ReadError {
    pub fn is_not_found(&self) -> bool {
        matches!(self, ReadError::NotFound { .. })
    }

    pub fn malformed(path: &str, message: impl Into<String>) -> Self {
        ReadError::Malformed {
            path: display_path(path),
            message: message.into(),
        }
    }

    pub(crate) fn from_io(relative: &str, error: &std::io::Error) -> Self {
        Self::from_io_at(display_path(relative), error)
    }

    /// Like `from_io`, for a path the user typed, shown exactly as typed.
    pub(crate) fn from_io_at(path: String, error: &std::io::Error) -> Self {
        match error.kind() {
            std::io::ErrorKind::NotFound => ReadError::NotFound { path },
            std::io::ErrorKind::PermissionDenied => ReadError::PermissionDenied { path },
            _ => ReadError::Io {
                path,
                message: error.to_string(),
            },
        }
    }
}

/// A parse failure before it is tied to a file; readers attach the path.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("{0}")]
pub struct ParseError(pub String);

impl ParseError {
    pub fn new(message: impl Into<String>) -> Self {
        ParseError(message.into())
    }
}

/// `sys/devices/...` becomes `/sys/devices/...`: paths are kept relative to
/// the root internally and shown absolute.
pub fn display_path(relative: &str) -> String {
    format!("/{}", relative.trim_start_matches('/'))
}
