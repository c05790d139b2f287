//! One module per subcommand; each wires layers and picks a reporter.

pub mod c2c;
pub mod doctor;
pub mod doctor_measure;
pub mod inspect;
pub mod irq;
pub mod lab;
pub mod lab_args;
pub mod lab_false_sharing;
pub mod lab_locks;
pub mod lab_remote_global;
pub mod lines;
pub mod measure_args;
pub mod measure_plan;
pub mod mem;
pub mod mem_curves;
pub mod memwatch;
pub mod moves;
pub mod process_args;
pub mod sizes;
pub mod snapshot;
pub mod topo;
pub mod undo;
pub mod watch;

use std::path::Path;

use anyhow::Context;
use numasleuth_kernel::gather::{read_topology, TopologyReadings};
use numasleuth_kernel::{snapshot as snap, Root};
use numasleuth_model::Topology;

/// `--apply` and `undo` change the running system; a snapshot is a record
/// of one, and writing into it would only fake a change, so both are
/// refused under `--root` before anything is read.
pub fn refuse_under_snapshot(root: &Root, what: &str) -> anyhow::Result<()> {
    if root.is_live() {
        return Ok(());
    }
    anyhow::bail!("{what} changes the live system; --root names a snapshot, which is not a system to change")
}

pub fn open_root(path: Option<&Path>) -> anyhow::Result<Root> {
    match path {
        None => Ok(Root::live()),
        Some(path) => snap::open(path).with_context(|| format!("cannot use --root {}", path.display())),
    }
}

/// The topology plus the host state `doctor` and `irq` judge.
pub fn host(root: &Root) -> anyhow::Result<(Topology, numasleuth_kernel::gather::HostReadings)> {
    let (topo, readings) = topology_and_readings(root)?;
    Ok((topo, numasleuth_kernel::gather::read_host(root, &readings.devices)))
}

pub fn topology(root: &Root) -> anyhow::Result<Topology> {
    Ok(topology_and_readings(root)?.0)
}

/// The readings are kept for `host`, which reads the devices they found.
fn topology_and_readings(root: &Root) -> anyhow::Result<(Topology, TopologyReadings)> {
    let readings = read_topology(root).context("cannot read the machine's topology")?;
    let topo = Topology::build(&readings).context("cannot make sense of the machine's topology")?;
    Ok((topo, readings))
}
