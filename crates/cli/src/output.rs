//! The binary's only ways to stdout and stderr.
//!
//! Rust ignores SIGPIPE, so a closed pipe shows up as an `EPIPE` write
//! error; we let it travel up like any error and `main` exits 0 for it.
//!
//! Both streams pass through `kernel::safe_text`: whatever a message or a
//! report holds (a snapshot's model name, a comm, a serde or clap message
//! quoting a hostile file), no escape sequence or bidi override reaches the
//! terminal. `say!` is `eprintln!` with that rule; the binary has no other
//! way to stderr but the progress bar, which is made safe the same way
//! (`tests/it/safe_output_cli.rs` checks the sources).

use std::io::{self, Write};

use numasleuth_kernel::safe_text;
use numasleuth_report::layout::TextLayout;

/// `eprintln!` made safe for a terminal.
macro_rules! say {
    ($($arg:tt)*) => {
        $crate::output::say_line(&format!($($arg)*))
    };
}

/// A message on stderr (`numasleuth: warning: …`), made safe for a
/// terminal. On a terminal it is wrapped with its continuation lines under
/// the message; into a pipe or log it stays one line, so every error and
/// warning is one line to grep. A closed stderr is ignored, as `eprintln!`
/// would panic on it.
pub fn say_line(text: &str) {
    let safe = safe_text::for_terminal(text);
    let mut stderr = io::stderr().lock();
    let _ = match terminal_width(Stream::Stderr) {
        Some(width) => write!(stderr, "{}", TextLayout::new(width, false).wrap(&format!("{safe}\n"))),
        None => writeln!(stderr, "{safe}"),
    };
}

/// Text (or CSV, HTML, SVG) on stdout. Colour sequences our renderers
/// write pass; nothing else that [`safe_text`] escapes does.
pub fn print(text: &str) -> anyhow::Result<()> {
    write_stdout(&safe_text::for_terminal_in_colour(text))
}

/// JSON on stdout: escapes keep the document's meaning.
pub fn print_json(text: &str) -> anyhow::Result<()> {
    write_stdout(&safe_text::for_json(text))
}

fn write_stdout(text: &str) -> anyhow::Result<()> {
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

/// The application layer's observer: its progress lines go to stderr
/// through `say!`.
pub struct Say;

impl numasleuth_app::Observer for Say {
    fn progress(&self, line: &str) {
        say!("{line}");
    }
}
