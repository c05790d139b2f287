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

/// `eprintln!` made safe for a terminal.
macro_rules! say {
    ($($arg:tt)*) => {
        $crate::output::say_line(&format!($($arg)*))
    };
}

/// One line (or several) on stderr, made safe for a terminal; a closed
/// stderr is ignored, as `eprintln!` would panic on it.
pub fn say_line(text: &str) {
    let mut stderr = io::stderr().lock();
    let _ = writeln!(stderr, "{}", safe_text::for_terminal(text));
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
