//! Errors that name the kernel file and say why it could not be used.
//!
//! Every reader error carries the path as the user would see it on a live
//! system (`/sys/devices/system/node/node1/distance`), so a message read from
//! a snapshot points at the same file the user would inspect by hand.

use thiserror::Error;

use crate::safe_text::{needs_escape, push_escaped};

/// Why a kernel file could not be read or understood.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum ReadError {
    #[error("{path}: not found")]
    NotFound { path: String },
    #[error("{path}: permission denied")]
    PermissionDenied { path: String },
    #[error("{path}: {message}")]
    Io {
        path: String,
        message: String,
        /// The OS error number, when the failure was one: callers match on
        /// it (ESRCH: the task was reaped mid-read), never on the message.
        errno: Option<i32>,
    },
    #[error("{path}: malformed: {message}")]
    Malformed { path: String, message: String },
}

impl ReadError {
    pub fn is_not_found(&self) -> bool {
        matches!(self, ReadError::NotFound { .. })
    }

    /// `message` must already have any file content in it passed through
    /// [`quote`]; the path is escaped here.
    pub fn malformed(path: &str, message: impl Into<String>) -> Self {
        ReadError::Malformed {
            path: display_path(path),
            message: message.into(),
        }
    }

    pub fn from_io(relative: &str, error: &std::io::Error) -> Self {
        // display_path escapes already, and escaping is idempotent: a second
        // pass would only cost a scan and a copy per absent file.
        Self::from_io_escaped(display_path(relative), error)
    }

    /// Like `from_io`, for a path the user typed, shown as typed (with
    /// control characters escaped, as everywhere).
    pub fn from_io_at(path: String, error: &std::io::Error) -> Self {
        Self::from_io_escaped(escape(&path), error)
    }

    fn from_io_escaped(path: String, error: &std::io::Error) -> Self {
        match error.kind() {
            std::io::ErrorKind::NotFound => ReadError::NotFound { path },
            std::io::ErrorKind::PermissionDenied => ReadError::PermissionDenied { path },
            _ => ReadError::Io {
                errno: error.raw_os_error(),
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
/// the root internally and shown absolute. Names in a hostile tree can hold
/// any byte but `/` and NUL, so control characters are escaped: a path in an
/// error must never move the cursor or recolour the user's terminal.
pub fn display_path(relative: &str) -> String {
    let relative = relative.trim_start_matches('/');
    if relative.chars().any(needs_escape) {
        return escape(&format!("/{relative}"));
    }
    let mut shown = String::with_capacity(relative.len() + 1);
    shown.push('/');
    shown.push_str(relative);
    shown
}

/// How much of a hostile input an error quotes: enough to recognise the
/// line, never a screenful.
pub const QUOTE_MAX_CHARS: usize = 200;

/// File content made safe to put in an error message: one line of at most
/// [`QUOTE_MAX_CHARS`] input characters (then `…`), with control and
/// invisible characters escaped so a file cannot send escape sequences to
/// the terminal or hide what it says.
pub fn quote(text: &str) -> String {
    let mut out = String::new();
    for (count, c) in text.chars().enumerate() {
        if count == QUOTE_MAX_CHARS {
            out.push('…');
            break;
        }
        push_escaped(&mut out, c);
    }
    out
}

/// Like [`quote`] without the length cut, for paths (bounded by PATH_MAX).
pub fn escape(text: &str) -> String {
    if !text.chars().any(needs_escape) {
        return text.to_string();
    }
    let mut out = String::with_capacity(text.len() + 8);
    text.chars().for_each(|c| push_escaped(&mut out, c));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn quote_escapes_terminal_controls() {
        assert_eq!(quote("a\x1b[31mred\r\0\n"), "a\\x1b[31mred\\r\\x00\\n");
        assert_eq!(quote("\u{9b}2J"), "\\x9b2J");
        assert_eq!(quote("abc\u{202e}fed"), "abc\\u{202e}fed");
        assert_eq!(quote("\x7f"), "\\x7f");
        assert_eq!(quote("0-3,8 ok µs"), "0-3,8 ok µs");
    }

    #[test]
    fn quote_cuts_long_input_to_one_short_line() {
        let long = "7".repeat(10_000);
        let quoted = quote(&long);
        assert_eq!(quoted.chars().count(), QUOTE_MAX_CHARS + 1);
        assert!(quoted.ends_with('…'));
        assert!(!quote("a\nb\nc").contains('\n'));
    }

    #[test]
    fn paths_from_a_hostile_tree_are_escaped() {
        let err = ReadError::malformed("sys/class/net/\x1b]0;pwned\x07/x", "bad");
        assert_eq!(err.to_string(), "/sys/class/net/\\x1b]0;pwned\\x07/x: malformed: bad");
        let err = ReadError::from_io_at("snap\x1b.tar.gz".into(), &std::io::Error::other("boom"));
        assert!(err.to_string().starts_with("snap\\x1b.tar.gz: "), "{err}");
    }

    proptest! {
        #[test]
        fn quoted_text_is_one_safe_line(text in "\\PC{0,300}|[\\x00-\\x{ff}]{0,300}") {
            let quoted = quote(&text);
            prop_assert!(!quoted.chars().any(needs_escape), "{quoted:?}");
            prop_assert!(quoted.chars().count() <= 9 * QUOTE_MAX_CHARS + 1);
        }
    }
}
