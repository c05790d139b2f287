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
    /// Every static check, ranked findings with evidence and a remedy.
    Doctor(DoctorArgs),
    /// Device-node vs IRQ-affinity audit; `--fix` plans, `--apply` changes
    /// (with an undo journal).
    Irq(IrqArgs),
    /// Reverse a change recorded in a journal by `--apply`.
    Undo(UndoArgs),
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

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum FailOn {
    Info,
    Warning,
    Critical,
}

#[derive(Debug, Args)]
pub struct DoctorArgs {
    /// Print JSON (schema numasleuth.doctor/1) instead of text.
    #[arg(long)]
    pub json: bool,
    /// Also write a self-contained HTML report to this file.
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,
    /// Exit 1 when a finding at or above this severity exists.
    #[arg(long, value_enum, value_name = "SEVERITY")]
    pub fail_on: Option<FailOn>,
}

#[derive(Debug, Args)]
pub struct IrqArgs {
    /// Print JSON (schema numasleuth.irq/1) instead of text.
    #[arg(long)]
    pub json: bool,
    /// Print a plan that moves off-node IRQs onto their device's local CPUs.
    #[arg(long)]
    pub fix: bool,
    /// Apply the plan (implies --fix); needs root. Writes an undo journal.
    #[arg(long)]
    pub apply: bool,
    /// Where --apply writes its journal [default: ./numasleuth-irq-<time>.journal.json].
    #[arg(long, value_name = "FILE", requires = "apply")]
    pub journal: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct UndoArgs {
    /// A journal written by `--apply`.
    #[arg(value_name = "JOURNAL")]
    pub journal: PathBuf,
}
