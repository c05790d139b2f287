//! What the user may type for `probe-latency`; nothing here looks at the
//! system (whether `--node` exists is checked in `probe_latency.rs`).

use std::path::PathBuf;
use std::time::Duration;

use clap::Args;

use numasleuth_app::limits::text::{node_id, probe_duration, rate_per_sec};

pub use numasleuth_app::probe_latency::Op;

/// `--op` as typed: one word, and a file for `write` and `fsync`.
pub fn op(words: Option<&[String]>) -> Result<Op, String> {
    let words = words.unwrap_or_default();
    let file = || -> Result<PathBuf, String> {
        match words.get(1) {
            Some(path) if !path.is_empty() => Ok(PathBuf::from(path)),
            _ => Err(format!(
                "--op {} needs a FILE to create, e.g. --op {} /tmp/probe.dat",
                words[0], words[0]
            )),
        }
    };
    match (words.first().map(String::as_str), words.len()) {
        (None, _) | (Some("alloc-touch"), 1) => Ok(Op::AllocTouch),
        (Some("alloc-touch"), _) => Err("--op alloc-touch takes no FILE".into()),
        (Some("write"), _) => file().map(Op::Write),
        (Some("fsync"), _) => file().map(Op::Fsync),
        (Some(other), _) => Err(format!(
            "`{}` is not an operation: give alloc-touch, write FILE or fsync FILE",
            numasleuth_kernel::error::quote(other)
        )),
    }
}

#[derive(Debug, Args)]
pub struct ProbeLatencyArgs {
    /// The operation: `alloc-touch` (map 64 KiB of fresh pages, bind them
    /// to --node with mbind, touch each page, unmap), `write FILE` (4 KiB
    /// writes) or `fsync FILE` (4 KiB write + fsync). FILE must not exist:
    /// the probe creates it and removes it at the end.
    #[arg(long, num_args = 1..=2, value_names = ["OP", "FILE"])]
    pub op: Option<Vec<String>>,
    /// The node alloc-touch binds its pages to, 0 to 1023 and a node of
    /// this machine with memory [default: the first node with memory].
    #[arg(short = 'N', long, value_name = "NODE", value_parser = node_id)]
    pub node: Option<u32>,
    /// Intended operations per second, 1/s to 1000000/s.
    #[arg(long, value_name = "RATE", default_value = "1000/s", value_parser = rate_per_sec)]
    pub rate: u64,
    /// How long to probe, 10ms to 24h.
    #[arg(long, value_name = "DURATION", default_value = "60s", value_parser = probe_duration)]
    pub duration: Duration,
    /// Print JSON (schema numasleuth.probe_latency/1) instead of text.
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub output: super::output::OutputArgs,
    /// Also write the latency timeline (worst per slice) as SVG.
    #[arg(long, value_name = "FILE")]
    pub svg: Option<PathBuf>,
    /// Record who opens kernel files that take the allocator's locks
    /// (/proc/slabinfo, pagetypeinfo, others' smaps) and list those reads
    /// next to each spike; an error if it cannot [default: on as root,
    /// skipped with a note when it cannot].
    #[arg(long, conflicts_with = "no_readers")]
    pub readers: bool,
    /// Do not record lock-file readers.
    #[arg(long)]
    pub no_readers: bool,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(list: &[&str]) -> Vec<String> {
        list.iter().map(|w| w.to_string()).collect()
    }

    #[test]
    fn operations_and_their_files() {
        assert_eq!(op(None), Ok(Op::AllocTouch));
        assert_eq!(op(Some(&words(&["alloc-touch"]))), Ok(Op::AllocTouch));
        assert_eq!(op(Some(&words(&["write", "/tmp/x"]))), Ok(Op::Write("/tmp/x".into())));
        assert_eq!(op(Some(&words(&["fsync", "f"]))), Ok(Op::Fsync("f".into())));
        assert!(op(Some(&words(&["write"]))).unwrap_err().contains("needs a FILE"));
        assert!(op(Some(&words(&["fsync", ""]))).unwrap_err().contains("needs a FILE"));
        assert!(op(Some(&words(&["alloc-touch", "f"]))).unwrap_err().contains("no FILE"));
        assert!(op(Some(&words(&["nan"]))).unwrap_err().contains("not an operation"));
        assert!(op(Some(&words(&["\u{1b}[2J"]))).unwrap_err().contains("\\x1b[2J"));
    }
}
