//! numasleuth's reference documentation, rendered from the same clap
//! definition that parses its command line, so it cannot drift from it:
//! shell completion scripts, one roff man page per command and subcommand,
//! and the Markdown reference docs/commands.md. Every man page and every
//! command's Markdown section ends in the examples and exit statuses of
//! [`examples`], one table for both.
//!
//! The crate does no I/O: the front-end hands in its built `clap::Command`
//! (`Cli::command()`), gets text or bytes back, and prints or writes them
//! itself. Errors are [`DocsError`].

#![forbid(unsafe_code)]

pub mod check;
pub mod examples;
mod man;
mod markdown;

pub use man::{man_page, man_pages, ManPage};
pub use markdown::reference as markdown_reference;

use clap::Command;

/// The program name completions complete and man pages are named after.
const BIN: &str = "numasleuth";

/// Why a document could not be rendered.
#[derive(Debug, thiserror::Error)]
pub enum DocsError {
    #[error("the completion script is not UTF-8")]
    CompletionNotUtf8(#[source] std::string::FromUtf8Error),
    #[error("cannot render the man page")]
    ManRender(#[source] std::io::Error),
    #[error("the man page is not UTF-8")]
    ManNotUtf8(#[source] std::string::FromUtf8Error),
}

/// The shells completion scripts are generated for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shell {
    Bash,
    Zsh,
    Fish,
}

/// The completion script of `command` for `shell`.
pub fn completion_script(mut command: Command, shell: Shell) -> Result<String, DocsError> {
    // Each subcommand's arguments are deferred until it runs; completions
    // need them all.
    command.build();
    let mut bytes = Vec::new();
    let target = match shell {
        Shell::Bash => clap_complete::Shell::Bash,
        Shell::Zsh => clap_complete::Shell::Zsh,
        Shell::Fish => clap_complete::Shell::Fish,
    };
    clap_complete::generate(target, &mut command, BIN, &mut bytes);
    String::from_utf8(bytes).map_err(DocsError::CompletionNotUtf8)
}

#[cfg(test)]
mod tests;
