//! What the user may type for `inspect`, `lines`, `watch` and `move`;
//! nothing here looks at the system.

use std::path::PathBuf;

use clap::Args;

use super::pid_arg::PidArg;

#[derive(Debug, Args)]
pub struct InspectArgs {
    #[command(flatten)]
    pub process: PidArg,
    /// Print JSON (schema numasleuth.inspect/2) instead of text.
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub output: super::output::OutputArgs,
    /// List every mapping, not only static sections, heap, stack and the
    /// 200 largest others (memory then grows with the mapping count).
    #[arg(long)]
    pub all_mappings: bool,
    /// Text: every thread and every writable static section page by page,
    /// instead of the one-screen summary grouped by object.
    #[arg(short = 'v', long = "sections", alias = "verbose")]
    pub sections: bool,
}

#[derive(Debug, Args)]
pub struct LinesArgs {
    /// An ELF binary or shared object; with --pid, the name or path of an
    /// object mapped by that process (default: its program).
    #[arg(value_name = "BINARY", required_unless_present = "pid")]
    pub binary: Option<PathBuf>,
    /// Use the program (or BINARY) as mapped by this process, with
    /// run-time addresses: a PID (1 to 4194304) or a process name.
    #[arg(short = 'p', long = "pid", id = "pid", value_name = "PID", value_parser = super::pid_arg::process)]
    pub process: Option<super::pid_arg::ProcessRef>,
    /// Cache-line size in bytes: a power of two from 8 to 4096 (128 covers
    /// adjacent-line prefetch pairs).
    #[arg(long, default_value_t = 64, value_parser = parse_line_size)]
    pub line_size: u64,
    /// Show the line holding this symbol and its neighbours.
    #[arg(long, value_name = "NAME")]
    pub symbol: Option<String>,
    /// Print JSON (schema numasleuth.lines/1) instead of text.
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub output: super::output::OutputArgs,
}

fn parse_line_size(text: &str) -> Result<u64, String> {
    let size: u64 = text.parse().map_err(|_| format!("`{text}` is not a number of bytes"))?;
    if !(8..=4096).contains(&size) || !size.is_power_of_two() {
        return Err(format!("line size {size} must be a power of two from 8 to 4096"));
    }
    Ok(size)
}

/// `0x7f00a000`, `7f00a000`: an address as maps and gdb print it (hex).
pub fn parse_address(text: &str) -> Result<u64, String> {
    let trimmed = text.trim();
    let digits = trimmed
        .strip_prefix("0x")
        .or_else(|| trimmed.strip_prefix("0X"))
        .unwrap_or(trimmed);
    let refused = || format!("`{text}` is not a 64-bit hexadecimal address such as 0x4c1040");
    // from_str_radix alone would take a sign (`+10`).
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(refused());
    }
    u64::from_str_radix(digits, 16).map_err(|_| refused())
}

/// `START-END` in hex, END exclusive, as in /proc/PID/maps.
pub fn parse_range(text: &str) -> Result<(u64, u64), String> {
    let (start, end) = text
        .split_once('-')
        .ok_or_else(|| format!("`{text}` is not a range START-END such as 0x4c1000-0x4c3000"))?;
    let (start, end) = (parse_address(start)?, parse_address(end)?);
    if start >= end {
        return Err(format!("range `{text}` is empty: START must be below END"));
    }
    Ok((start, end))
}

fn parse_len(text: &str) -> Result<u64, String> {
    match text.trim() {
        "1" => Ok(1),
        "2" => Ok(2),
        "4" => Ok(4),
        "8" => Ok(8),
        other => Err(format!("--len {other}: a watchpoint covers 1, 2, 4 or 8 bytes")),
    }
}

#[derive(Debug, Args)]
#[command(group(clap::ArgGroup::new("target").required(true).args(["symbol", "addr"])))]
pub struct WatchArgs {
    /// The process to watch: every thread, including ones started during
    /// the watch. It is never stopped.
    #[command(flatten)]
    pub process: PidArg,
    /// Watch this symbol (a global variable), found in the program first,
    /// then in its libraries.
    #[arg(long, value_name = "NAME")]
    pub symbol: Option<String>,
    /// Look the symbol up only in this mapped object (path or file name).
    #[arg(long, value_name = "PATH", requires = "symbol")]
    pub object: Option<String>,
    /// Watch this run-time address (hex).
    #[arg(long, value_name = "ADDR", value_parser = parse_address)]
    pub addr: Option<u64>,
    /// Bytes watched: 1, 2, 4 or 8, aligned [default: the largest that
    /// fits the symbol and its alignment, 8 for --addr].
    #[arg(long, value_name = "BYTES", value_parser = parse_len)]
    pub len: Option<u64>,
    /// How long to watch, 1ms to 7 days (168h) [default: until Ctrl-C or
    /// SIGTERM, which print the report of what was counted, like
    /// `perf stat -p`].
    #[arg(long, value_parser = numasleuth_app::limits::text::watch_duration)]
    pub duration: Option<std::time::Duration>,
    /// Count reads too (x86 has no read-only watchpoints).
    #[arg(long)]
    pub rw: bool,
    /// Print JSON (schema numasleuth.watch/1) instead of text.
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub output: super::output::OutputArgs,
}

#[derive(Debug, Args)]
#[command(group(clap::ArgGroup::new("what").required(true).args(["range", "symbol", "section"])))]
pub struct MoveArgs {
    /// The process whose pages move.
    #[command(flatten)]
    pub process: PidArg,
    /// Pages of this address range (hex, END exclusive).
    #[arg(long, value_name = "START-END", value_parser = parse_range)]
    pub range: Option<(u64, u64)>,
    /// Pages holding this symbol.
    #[arg(long, value_name = "NAME")]
    pub symbol: Option<String>,
    /// Pages of this section (e.g. .bss) of the program, or of --object.
    #[arg(long, value_name = "NAME")]
    pub section: Option<String>,
    /// The mapped object (path or file name) for --symbol or --section.
    #[arg(long, value_name = "PATH")]
    pub object: Option<String>,
    /// The node the pages move to.
    #[arg(long = "to-node", value_name = "N")]
    pub to_node: u32,
    /// Move them (the default only prints what would move). Writes an undo
    /// journal first.
    #[arg(long)]
    pub apply: bool,
    /// Where --apply writes its journal [default: ./numasleuth-move-<pid>-<time>.journal.json].
    #[arg(long, value_name = "FILE", requires = "apply")]
    pub journal: Option<PathBuf>,
    /// Print JSON (schema numasleuth.move/1) instead of text.
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub output: super::output::OutputArgs,
}

macro_rules! pid_accessor {
    ($($args:ty),*) => {$(
        impl $args {
            pub fn pid(&self) -> u32 {
                self.process.get()
            }
        }
    )*};
}

pid_accessor!(InspectArgs, WatchArgs, MoveArgs, super::bisect_args::BisectArgs);

impl LinesArgs {
    pub fn pid(&self) -> Option<u32> {
        self.process.as_ref().map(super::pid_arg::ProcessRef::pid)
    }
}
