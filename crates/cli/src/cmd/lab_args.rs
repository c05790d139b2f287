//! Stage one for `lab`: what the user may type. `--threads` is one count,
//! as in `mem` (and perf, stress-ng, MLC); a sweep over several counts is
//! `--thread-sweep`, in list syntax (`1,2,4` or `1-8`). Nothing here looks
//! at the machine.

use std::path::PathBuf;

use clap::{Args, Subcommand, ValueEnum};
use numasleuth_kernel::IdList;

use numasleuth_app::limits::{LIST_MAX, THREADS_MAX};

#[derive(Debug, Args)]
pub struct LabArgs {
    #[command(subcommand)]
    pub experiment: Experiment,
}

#[derive(Debug, Subcommand)]
pub enum Experiment {
    /// Threads each increment their own counter, packed into one cache
    /// line or padded to 128 bytes: the cost of false sharing.
    FalseSharing(FalseSharingArgs),
    /// Ticket and queued (MCS) spinlocks, std::sync::Mutex and a bare
    /// atomic, with an empty or "one load" critical section.
    Locks(LocksArgs),
    /// Workers on one node write a global K times per operation, with the
    /// global local, on a remote node, or per thread (the fix).
    RemoteGlobal(RemoteGlobalArgs),
}

fn thread_counts(text: &str) -> Result<IdList, String> {
    let list = IdList::parse_input(text).map_err(|e| e.to_string())?;
    if list.contains(0) {
        return Err("thread counts start at 1".into());
    }
    if list.is_empty() {
        return Err("give at least one thread count".into());
    }
    if list.iter().any(|n| n > THREADS_MAX) {
        return Err(format!("thread counts go up to {THREADS_MAX}"));
    }
    if list.len() > LIST_MAX {
        return Err(format!(
            "{} thread counts given; at most {LIST_MAX} (each is a full run)",
            list.len()
        ));
    }
    Ok(list)
}

/// One count, as everywhere else; a list (the old meaning) says where the
/// sweep went.
fn thread_count(text: &str) -> Result<u32, String> {
    numasleuth_app::limits::text::threads(text).map_err(|error| {
        if text.contains([',', '-', ':']) {
            format!("{error}; to run several counts use --thread-sweep {}", text.trim())
        } else {
            error.to_string()
        }
    })
}

#[derive(Debug, Args)]
pub struct CommonArgs {
    /// Print JSON (schema numasleuth.lab.<experiment>/1) with every raw sample.
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub output: super::output::OutputArgs,
    /// Also write an SVG chart of throughput against threads.
    #[arg(long, value_name = "FILE")]
    pub svg: Option<PathBuf>,
    /// Run this many threads, 1 to 4096 (one count, as `mem --threads`)
    /// [default: the sweep 1, 2, 4, … and every CPU].
    #[arg(long, value_name = "N", value_parser = thread_count, conflicts_with = "thread_sweep")]
    pub threads: Option<u32>,
    /// Run once per thread count in this list (e.g. 1,2,4 or 1-8 or
    /// 2-16:2), each 1 to 4096, at most 64 counts.
    #[arg(long, value_name = "COUNTS", value_parser = thread_counts)]
    pub thread_sweep: Option<IdList>,
    /// Run the threads on these CPUs only (numactl syntax, e.g. 0-3,8, or
    /// 0-30:2), in the order --placement gives them; the default sweep
    /// then ends at their number. Default: every CPU this process may use.
    #[arg(short = 'C', long, value_name = "LIST", value_parser = numasleuth_app::limits::text::cpu_list)]
    pub cpus: Option<IdList>,
    /// Samples kept per configuration, 1 to 1000 (a warm-up sample is
    /// always dropped).
    #[arg(long, value_name = "N", default_value_t = 5, value_parser = clap::value_parser!(u32).range(1..=1000))]
    pub samples: u32,
    /// Length of one sample: milliseconds (`40`) or a duration (`40ms`,
    /// `0.5s`), 1ms to 60s.
    #[arg(long, value_name = "MS", default_value_t = 40, value_parser = numasleuth_app::limits::text::sample_ms)]
    pub sample_ms: u64,
    /// Allow more threads than CPUs this process may use. Threads then
    /// share CPUs and spinning waiters sleep after a while, so spinlock
    /// figures measure the scheduler as much as the lock.
    #[arg(long)]
    pub oversubscribe: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum PlacementArg {
    /// Fill one node's CPUs before the next node's.
    Compact,
    /// Alternate between nodes, so every pair of neighbours crosses one.
    Spread,
}

impl From<PlacementArg> for numasleuth_model::lab::Placement {
    fn from(arg: PlacementArg) -> Self {
        match arg {
            PlacementArg::Compact => Self::Compact,
            PlacementArg::Spread => Self::Spread,
        }
    }
}

#[derive(Debug, Args)]
pub struct FalseSharingArgs {
    #[command(flatten)]
    pub common: CommonArgs,
    /// Where threads go, one run per placement
    /// [default: both on a multi-node machine, compact on one node].
    #[arg(long, value_enum, value_delimiter = ',', value_name = "PLACEMENT")]
    pub placement: Vec<PlacementArg>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum LockArg {
    Ticket,
    Mcs,
    Mutex,
    Atomic,
}

#[derive(Debug, Args)]
pub struct LocksArgs {
    #[command(flatten)]
    pub common: CommonArgs,
    /// Where threads go, one run per placement
    /// [default: both on a multi-node machine, compact on one node].
    #[arg(long, value_enum, value_delimiter = ',', value_name = "PLACEMENT")]
    pub placement: Vec<PlacementArg>,
    /// Which locks to run [default: all four].
    #[arg(long, value_enum, value_delimiter = ',', value_name = "LOCK")]
    pub locks: Vec<LockArg>,
}

#[derive(Debug, Args)]
pub struct RemoteGlobalArgs {
    #[command(flatten)]
    pub common: CommonArgs,
    /// Node A, whose CPUs run the workers [default: the first allowed (or
    /// -C) CPU's node]; one node, as the experiment has one home for its
    /// workers, so not -N's list.
    #[arg(long, value_name = "NODE")]
    pub node: Option<u32>,
    /// Node B, which holds the remote global [default: the nearest other
    /// node with memory]; a second, specific node, so not -N.
    #[arg(long, value_name = "NODE")]
    pub remote_node: Option<u32>,
    /// Writes to the global per operation, 1 to 64 (the incident saw
    /// about 3).
    #[arg(long, value_name = "K", default_value_t = 3, value_parser = clap::value_parser!(u32).range(1..=64))]
    pub writes_per_op: u32,
}
