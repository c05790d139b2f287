//! `doctor`: the diagnosis of the machine, with `-p` the investigation of
//! one process ([`super::observe`]) and with `--measure` the short
//! measurements ([`super::measure`]). What runs is decided here, once, so
//! every front-end that asks for a diagnosis gets the same checks; the
//! front-end renders the result and turns its gate into an exit status.

use std::time::Duration;

use numasleuth_analyze::doctor::CheckId;
use numasleuth_analyze::findings::Diagnosis;
use numasleuth_analyze::mem_document::MemDocument;
use numasleuth_kernel::gather::{read_host, HostReadings};
use numasleuth_kernel::procfs::process::{read_process_stat, ProcessError};
use numasleuth_kernel::Root;
use numasleuth_model::hotpages::HotRemoteRegion;
use numasleuth_model::stop::Stop;
use numasleuth_model::Topology;

use super::ProcessRequest;
use crate::env::TopologyError;
use crate::hotpages::{self, HotpagesRequest, ReaperSpec};
use crate::process_ref::MissingError;
use crate::steps::StepObserver;
use crate::Observer;

/// `doctor --pid PID --measure`'s DAMON watch.
pub const HOT_MEMORY: CheckId = CheckId::ProcessHotMemory;
/// Long enough for DAMON to split its regions down to the hot ones (it
/// aggregates every 100 ms), short enough for a diagnosis.
const HOT_MEMORY_WINDOW: Duration = Duration::from_secs(3);
/// Regions judged: the finding names at most a few.
const HOT_MEMORY_TOP: usize = 20;

/// What `doctor` is asked, with no clap in it.
pub struct MachineRequest {
    /// The process to investigate too (`-p`), already resolved.
    pub pid: Option<u32>,
    /// Static checks only: no live probes of the process.
    pub quick: bool,
    /// The short measurements (matrices, readers, siblings, DAMON).
    pub measure: bool,
    /// The program `hotpages`' reaper runs as, for `--pid --measure`.
    pub reaper: ReaperSpec,
}

/// The diagnosis, ranked, with what the report shows beside it.
pub struct MachineDiagnosis {
    /// The machine in a line, and a note when it has one node.
    pub headline: String,
    pub topology: Topology,
    /// What the topology read could not use, then the topology's own
    /// warnings.
    pub warnings: Vec<String>,
    pub host: HostReadings,
    pub diagnosis: Diagnosis,
    /// `--measure`'s matrices, when they were measured.
    pub measured: Option<MemDocument>,
}

/// Why no diagnosis could be made at all.
#[derive(Debug, thiserror::Error)]
pub enum DoctorError {
    #[error(transparent)]
    Topology(#[from] TopologyError),
    /// The process the user named is not running: a mistake to report,
    /// not a check to skip.
    #[error("doctor --pid {pid}: {error}")]
    NoSuchProcess { pid: u32, error: ProcessError },
    #[error(transparent)]
    NotInSnapshot(#[from] MissingError),
}

/// Every check, then the process's observations joined (`pid`), then the
/// measurements (`measure`), ranked. `stop` ends the live probes and the
/// measurements early; `steps` draws the measurements' runs.
pub fn diagnose(
    root: &Root,
    request: MachineRequest,
    stop: &Stop,
    observer: &dyn Observer,
    steps: &mut dyn StepObserver,
) -> Result<MachineDiagnosis, DoctorError> {
    let measure = request.measure;
    let read = crate::env::read_degraded(root)?;
    let host = read_host(root, &read.readings);
    let topology = read.topology;
    if let Some(pid) = request.pid {
        check_named(root, pid)?;
    }
    let mut diagnosis = numasleuth_analyze::doctor::diagnose(&topology, &host);
    if let Some(pid) = request.pid {
        // A process that cannot be read is a skipped check, never the end
        // of the diagnosis.
        let asked = ProcessRequest {
            pid,
            quick: request.quick,
        };
        let observed = super::observe(root, &topology, asked, stop, observer);
        super::judge(&observed, &topology, &mut diagnosis);
        let regions = hot_memory(root, &topology, request, pid, (stop, observer), &mut diagnosis);
        numasleuth_analyze::join::with_hot_regions(&mut diagnosis.findings, &regions);
    }
    let measured = super::measure::run(root, &topology, measure, (stop, steps), &mut diagnosis);
    diagnosis.rank();
    let mut warnings = read.warnings;
    warnings.extend(numasleuth_analyze::topology::warnings(&topology));
    Ok(MachineDiagnosis {
        headline: headline(&topology),
        topology,
        warnings,
        host,
        diagnosis,
        measured,
    })
}

/// A PID the user named that is not there is an error; in a snapshot,
/// one that says which processes it holds.
fn check_named(root: &Root, pid: u32) -> Result<(), DoctorError> {
    if let Err(error @ ProcessError::NoSuchProcess { .. }) = read_process_stat(root, pid) {
        if root.is_live() {
            return Err(DoctorError::NoSuchProcess { pid, error });
        }
        crate::process_ref::process_stat(root, pid)?;
    }
    Ok(())
}

/// `--pid --measure`: a short `hotpages` where DAMON can watch the
/// process, for `hot-remote-memory`; where it cannot, the reason is the
/// skipped check's note (no DAMON, no vaddr operations, not root, a
/// kdamond set up by something else). Returns the hot remote regions, for
/// a join with the other observations.
fn hot_memory(
    root: &Root,
    topology: &Topology,
    request: MachineRequest,
    pid: u32,
    (stop, observer): (&Stop, &dyn Observer),
    diagnosis: &mut Diagnosis,
) -> Vec<HotRemoteRegion> {
    if !request.measure {
        diagnosis.skipped(
            HOT_MEMORY,
            "needs --measure (DAMON watches the process's memory for 3 s)",
        );
        return Vec::new();
    }
    if !root.is_live() {
        diagnosis.skipped(HOT_MEMORY, "DAMON watches a live process; --root names a snapshot");
        return Vec::new();
    }
    let watch = HotpagesRequest {
        pid,
        duration: HOT_MEMORY_WINDOW,
        top: HOT_MEMORY_TOP,
    };
    match hotpages::observe(root, topology, watch, request.reaper, stop, observer) {
        Ok(observed) => {
            diagnosis.ran(HOT_MEMORY, observed.findings);
            observed.hot_remote
        }
        Err(e) => {
            diagnosis.skipped(HOT_MEMORY, format!("process {pid}: {}", crate::error_chain(&e)));
            Vec::new()
        }
    }
}

/// "2 node(s), 4 CPUs (4 online), <model>", and a note on one node.
pub fn headline(topo: &Topology) -> String {
    let cpu = topo.cpu_name().unwrap_or("unknown CPU");
    let mut line = format!(
        "{} node(s), {} CPUs ({} online), {cpu}",
        topo.nodes.len(),
        topo.cpus.len(),
        topo.online_cpus().len()
    );
    if topo.nodes.len() == 1 {
        line.push_str(
            "\none NUMA node: cross-node checks (placement, fallback, IRQ locality) have nothing to compare here",
        );
    }
    line
}
