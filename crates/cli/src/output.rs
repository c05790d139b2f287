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

pub fn is_broken_pipe(error: &anyhow::Error) -> bool {
    error
        .chain()
        .filter_map(|cause| cause.downcast_ref::<io::Error>())
        .any(|e| e.kind() == io::ErrorKind::BrokenPipe)
}

/// The width text tables must fit: `$COLUMNS` when the user set it (1 to
/// 10,000), else the terminal's own width when stdout is one; `None` for a
/// pipe or file, which gets every cell whole.
pub fn table_width() -> Option<usize> {
    if let Some(columns) = std::env::var("COLUMNS")
        .ok()
        .and_then(|c| c.trim().parse::<usize>().ok())
    {
        return (1..=10_000).contains(&columns).then_some(columns);
    }
    use std::io::IsTerminal;
    if !io::stdout().is_terminal() {
        return None;
    }
    // SAFETY: winsize is plain old data; TIOCGWINSZ only writes into it.
    let mut size: libc::winsize = unsafe { std::mem::zeroed() };
    // SAFETY: fd 1 is stdout, and `size` is a valid, writable winsize.
    let ok = unsafe { libc::ioctl(libc::STDOUT_FILENO, libc::TIOCGWINSZ, &mut size) } == 0;
    (ok && size.ws_col > 0).then_some(usize::from(size.ws_col))
}
