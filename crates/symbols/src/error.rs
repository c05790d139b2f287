//! Why an object file or a symbol could not be used, always with the path.

use numasleuth_kernel::error::escape;
use thiserror::Error;

#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum SymbolError {
    #[error("{path}: not found")]
    NotFound { path: String },
    #[error("{path}: permission denied")]
    PermissionDenied { path: String },
    #[error("{path}: not an ELF file")]
    NotElf { path: String },
    #[error("{path}: malformed ELF: {message}")]
    Malformed { path: String, message: String },
    #[error("{path}: {message}")]
    Io { path: String, message: String },
    #[error("symbol `{name}` not found in {searched}{}", did_you_mean(suggestions))]
    SymbolNotFound {
        name: String,
        searched: String,
        /// Names close to `name`, closest first (see `suggest`).
        suggestions: Vec<String>,
    },
    #[error("section `{section}` not found in {searched}")]
    SectionNotFound { section: String, searched: String },
}

/// `; did you mean `nil_root` or `nil_roots`?`, or nothing.
fn did_you_mean(suggestions: &[String]) -> String {
    let quoted: Vec<String> = suggestions.iter().map(|s| format!("`{}`", escape(s))).collect();
    match quoted.as_slice() {
        [] => String::new(),
        [one] => format!("; did you mean {one}?"),
        [init @ .., last] => format!("; did you mean {} or {last}?", init.join(", ")),
    }
}

impl SymbolError {
    /// Paths come from process maps and user input and may hold any byte:
    /// control characters are escaped, as in every kernel error.
    pub(crate) fn io(path: &str, error: &std::io::Error) -> Self {
        let path = escape(path);
        match error.kind() {
            std::io::ErrorKind::NotFound => SymbolError::NotFound { path },
            std::io::ErrorKind::PermissionDenied => SymbolError::PermissionDenied { path },
            _ => SymbolError::Io {
                path,
                message: error.to_string(),
            },
        }
    }

    pub(crate) fn malformed(path: &str, error: impl std::fmt::Display) -> Self {
        SymbolError::Malformed {
            path: escape(path),
            message: error.to_string(),
        }
    }
}
