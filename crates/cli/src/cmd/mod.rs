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
    let read = numasleuth_app::env::read_degraded(root)?;
    warn(&read.warnings);
    Ok(read.topology)
}

pub fn warn(warnings: &[String]) {
    for warning in warnings {
        say!("numasleuth: warning: {warning}");
    }
}
