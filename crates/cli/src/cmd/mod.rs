//! One module per subcommand; each wires layers and picks a reporter.

pub mod bisect;
pub mod bisect_args;
pub mod c2c;
pub mod docs_gen;
pub mod doctor;
pub mod hot_args;
pub mod hotlines;
pub mod hotpages;
pub mod hotpages_args;
pub mod inspect;
pub mod irq;
pub mod lab;
pub mod lab_args;
pub mod lines;
pub mod measure_args;
pub mod measure_plan;
pub mod mem;
pub mod meminfo;
pub mod memwatch;
pub mod migrations;
pub mod moves;
pub mod output;
pub mod pid_arg;
pub mod pmu;
pub mod pmu_args;
pub mod pmu_diff;
pub mod probe_args;
pub mod probe_latency;
pub mod process_args;
pub mod provenance;
pub mod readers;
pub mod readers_args;
pub mod runs;
pub mod runs_args;
pub mod serve;
pub mod serve_args;
pub mod snapshot;
mod stop_signal;
pub mod top;
pub mod topo;
pub mod undo;
pub mod watch;

use std::path::Path;

use anyhow::Context;
use numasleuth_kernel::{snapshot as snap, Root};
use numasleuth_model::Topology;

/// Reads a process's `stat`, saying, when `--root` names a snapshot that
/// lacks the process, which processes it does hold and how to capture one.
pub fn process_stat(root: &Root, pid: u32) -> anyhow::Result<numasleuth_kernel::procfs::task::TaskStat> {
    Ok(numasleuth_app::process_ref::process_stat(root, pid)?)
}

/// `--apply` and `undo` change the running system; a snapshot is a record
/// of one, and writing into it would only fake a change, so both are
/// refused under `--root` before anything is read.
pub fn refuse_under_snapshot(root: &Root, what: &str) -> anyhow::Result<()> {
    Ok(numasleuth_app::refuse_under_snapshot(root, what)?)
}

pub fn open_root(path: Option<&Path>) -> anyhow::Result<Root> {
    match path {
        None => Ok(Root::live()),
        Some(path) => {
            provenance::remember_root(path);
            snap::open(path).with_context(|| format!("cannot use --root {}", path.display()))
        }
    }
}

/// The topology for commands that only need it; what could not be read is
/// said on stderr, and the command goes on with the rest.
pub fn topology(root: &Root) -> anyhow::Result<Topology> {
    let read = read_degraded(root)?;
    warn(&read.warnings);
    Ok(read.topology)
}

pub fn warn(warnings: &[String]) {
    for warning in warnings {
        say!("numasleuth: warning: {warning}");
    }
}

pub use numasleuth_app::env::Readings;

/// Only a tree with nothing usable at all is an error.
pub fn read_degraded(root: &Root) -> anyhow::Result<Readings> {
    Ok(numasleuth_app::env::read_degraded(root)?)
}
