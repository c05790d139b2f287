//! Stage one of the CLI: what the user may type. Nothing here looks at the
//! system; commands resolve these values against it afterwards.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

#[derive(Debug, Parser)]
#[command(
    name = "numasleuth",
    version,
    about = "Find, prove and explain NUMA and cache-coherence performance problems",
    after_help = "Exit status: 0 success, 1 findings at or above --fail-on, 2 error."
)]
pub struct Cli {
    /// Read /proc and /sys from this directory or snapshot archive
    /// (.tar.gz) instead of the live system.
    #[arg(long, global = true, value_name = "PATH")]
    pub root: Option<PathBuf>,

    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Nodes, CPUs, memory per node, distances, caches, devices and the
    /// limits this process runs under.
    Topo(TopoArgs),
    /// Capture every /proc and /sys file numasleuth reads, for offline
    /// analysis with --root.
    Snapshot(SnapshotArgs),
}

#[derive(Debug, Args)]
pub struct TopoArgs {
    /// Print JSON (schema numasleuth.topo/1) instead of text.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct SnapshotArgs {
    /// Where to write: a name ending in .tar.gz or .tgz makes an archive,
    /// anything else a new directory. Never overwrites.
    #[arg(short = 'o', long = "output", value_name = "PATH")]
    pub output: PathBuf,
}
