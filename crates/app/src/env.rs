//! The machine a request runs on, read once: the topology, what reading
//! it could not use (one warning per file or dropped fact), and the
//! readings the host checks go on from. Every front-end reads it here, so
//! a degraded read says the same thing in `topo`, `doctor` and the rest.

use numasleuth_kernel::gather::{read_topology, TopologyReadings};
use numasleuth_kernel::{ReadError, Root, Unread};
use numasleuth_model::Topology;

/// A topology read that kept going past files it could not use.
pub struct Readings {
    pub topology: Topology,
    pub readings: TopologyReadings,
    /// One line per file left out, naming it and why, and per fact the
    /// model dropped as contradictory.
    pub warnings: Vec<String>,
}

/// The files a topology cannot do without were unreadable.
#[derive(Debug, thiserror::Error)]
#[error("cannot read the machine's topology")]
pub struct TopologyError(#[source] pub ReadError);

/// One warning per file that could not be used, each shown without it.
pub fn unread_warnings(unread: &[Unread]) -> Vec<String> {
    unread
        .iter()
        .map(|u| format!("could not read {u}; shown without it"))
        .collect()
}

/// Reads the topology, keeping every fact that could be read and a
/// warning for each that could not.
pub fn read_degraded(root: &Root) -> Result<Readings, TopologyError> {
    let readings = read_topology(root).map_err(TopologyError)?;
    let (topology, problems) = Topology::build_degraded(&readings);
    let mut warnings = unread_warnings(&readings.unread);
    warnings.extend(problems.iter().map(|p| format!("{p}; shown without those distances")));
    Ok(Readings {
        topology,
        readings,
        warnings,
    })
}
