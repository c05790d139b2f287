//! Why an archive cannot be read: a [`Problem`] with the archive itself,
//! worded for the user, or an I/O failure outside it.

use std::io;

/// Why an archive cannot be used, ready for the user. The caller puts the
/// archive's path (and what it was expected to be) in front.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct Problem(pub String);

impl Problem {
    pub(crate) fn new(message: impl Into<String>) -> Self {
        Problem(message.into())
    }

    /// A failure of the stream underneath: gzip corruption, truncation.
    pub(crate) fn stream(error: io::Error) -> Self {
        match error.kind() {
            io::ErrorKind::UnexpectedEof => Problem::new("truncated: the archive ends in the middle"),
            io::ErrorKind::InvalidInput | io::ErrorKind::InvalidData => Problem(format!("corrupt gzip data: {error}")),
            // Our own caps on the stream say what they are.
            _ => Problem(error.to_string()),
        }
    }
}

/// Reading an archive failed.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The archive is refused: what is wrong with it (corrupt, truncated,
    /// over a cap, hostile), or a failure to unpack one of its entries.
    #[error(transparent)]
    Refused(#[from] Problem),
    /// A failure of the file or directory the caller handed over, not of
    /// what the archive holds (its descriptor could not be cloned or
    /// rewound, the directory to unpack into could not be opened).
    #[error(transparent)]
    Io(#[from] io::Error),
}
