//! What the user may type for `inspect` and `lines`; nothing here looks at
//! the system.

use std::path::PathBuf;

use clap::Args;

#[derive(Debug, Args)]
pub struct InspectArgs {
    /// The process to inspect.
    #[arg(value_name = "PID")]
    pub pid: u32,
    /// Print JSON (schema numasleuth.inspect/1) instead of text.
    #[arg(long)]
    pub json: bool,
    /// List every mapping, not only static sections, heap, stack and the
    /// 200 largest others (memory then grows with the mapping count).
    #[arg(long)]
    pub all_mappings: bool,
}

#[derive(Debug, Args)]
pub struct LinesArgs {
    /// An ELF binary or shared object; with --pid, the name or path of an
    /// object mapped by that process (default: its program).
    #[arg(value_name = "BINARY", required_unless_present = "pid")]
    pub binary: Option<PathBuf>,
    /// Use the program (or BINARY) as mapped by this process, with
    /// run-time addresses.
    #[arg(long, value_name = "PID")]
    pub pid: Option<u32>,
    /// Cache-line size in bytes (a power of two; 128 covers adjacent-line
    /// prefetch pairs).
    #[arg(long, default_value_t = 64, value_parser = parse_line_size)]
    pub line_size: u64,
    /// Show the line holding this symbol and its neighbours.
    #[arg(long, value_name = "NAME")]
    pub symbol: Option<String>,
    /// Print JSON (schema numasleuth.lines/1) instead of text.
    #[arg(long)]
    pub json: bool,
}

fn parse_line_size(text: &str) -> Result<u64, String> {
    let size: u64 = text.parse().map_err(|_| format!("`{text}` is not a number of bytes"))?;
    if !(8..=4096).contains(&size) || !size.is_power_of_two() {
        return Err(format!("line size {size} must be a power of two from 8 to 4096"));
    }
    Ok(size)
}
