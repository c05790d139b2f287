//! Writing to stdout so that `numasleuth topo | head -1` is not an error.
//!
//! Rust ignores SIGPIPE, so a closed pipe shows up as an `EPIPE` write
//! error; we let it travel up like any error and `main` exits 0 for it.

use std::io::{self, Write};

pub fn print(text: &str) -> anyhow::Result<()> {
    let mut stdout = io::stdout().lock();
    stdout.write_all(text.as_bytes())?;
    stdout.flush()?;
    Ok(())
}

pub fn print_json<T: serde::Serialize>(value: &T) -> anyhow::Result<()> {
    let mut text = serde_json::to_string_pretty(value)?;
    text.push('\n');
    print(&text)
}

pub fn is_broken_pipe(error: &anyhow::Error) -> bool {
    error
        .chain()
        .filter_map(|cause| cause.downcast_ref::<io::Error>())
        .any(|e| e.kind() == io::ErrorKind::BrokenPipe)
}
