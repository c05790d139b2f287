//! Writing to stdout so that `numasleuth topo | head -1` is not an error.
//!
//! Rust ignores SIGPIPE, so a closed pipe shows up as an `EPIPE` write
//! error; we let it travel up like any error and `main` exits 0 for it.

use std::io::{self, Write};

use numasleuth_report::layout::TextLayout;

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

/// Where text goes: each stream has its own terminal (or none).
#[derive(Debug, Clone, Copy)]
pub enum Stream {
    Stdout,
    Stderr,
}

/// The width text on `stream` must fit: `$COLUMNS` when the user set it (1
/// to 10,000), else the terminal's width when the stream is one; `None`
/// for a pipe or file.
pub fn terminal_width(stream: Stream) -> Option<usize> {
    if let Some(columns) = std::env::var("COLUMNS")
        .ok()
        .and_then(|c| c.trim().parse::<usize>().ok())
        .filter(|c| (1..=10_000).contains(c))
    {
        return Some(columns);
    }
    use std::io::IsTerminal;
    let terminal = match stream {
        Stream::Stdout => io::stdout().is_terminal(),
        Stream::Stderr => io::stderr().is_terminal(),
    };
    let size = terminal.then(ratatui::crossterm::terminal::size).and_then(Result::ok);
    size.map(|(columns, _rows)| usize::from(columns)).filter(|&c| c > 0)
}

/// The width of a report on `stream`: the terminal's, or
/// `report::layout::DEFAULT_WIDTH` (100) for a pipe or file, as `ps` picks a
/// fixed width when it cannot ask a terminal.
pub fn width(stream: Stream) -> usize {
    terminal_width(stream).unwrap_or(numasleuth_report::layout::DEFAULT_WIDTH)
}

/// How text on stdout is laid out: its width, and colour (a terminal
/// without `NO_COLOR`) when `colour` allows it.
pub fn stdout_layout(colour: bool) -> TextLayout {
    TextLayout::new(width(Stream::Stdout), colour && crate::cmd::measure_plan::colour())
}

/// A message for stderr (`numasleuth: warning: …`). On a terminal it is
/// wrapped with its continuation lines under the message; into a pipe or
/// log it stays one line, so every error and warning is one line to grep.
pub fn eprint_wrapped(line: &str) {
    match terminal_width(Stream::Stderr) {
        Some(width) => eprint!("{}", TextLayout::new(width, false).wrap(&format!("{line}\n"))),
        None => eprintln!("{line}"),
    }
}
