//! `irq`: each device's interrupts against the node it sits on
//! (`analyze::irq::audit`), the affinities that would put them there
//! (`plan`, with `--fix`), and, with `--apply`, those affinities written
//! through a sealed journal that `undo` reverses (`change`).

use std::path::PathBuf;
use std::time::{SystemTime, UNIX_EPOCH};

use numasleuth_analyze::irq::{audit, plan, AffinityChange, IrqDocument};
use numasleuth_change::{ChangeError, FileChange, Journal, JournalKey, MachineIdentity, KIND_IRQ};
use numasleuth_kernel::{ReadError, Root};

use crate::env::TopologyError;
use crate::Observer;

/// What `irq` is asked, with no clap in it.
pub struct IrqRequest {
    /// Plan the affinities that would fix what the audit found.
    pub fix: bool,
    /// Plan them and write them (the live system only).
    pub apply: bool,
    /// Where `--apply` writes its journal; `None`: a name with the time.
    pub journal: Option<PathBuf>,
}

/// Why there is no audit, or why nothing was changed.
#[derive(Debug, thiserror::Error)]
pub enum IrqError {
    #[error("irq --apply changes the live system; --root names a snapshot, which is not a system to change")]
    UnderSnapshot,
    #[error(transparent)]
    Topology(#[from] TopologyError),
    #[error("cannot audit IRQs")]
    Interrupts(#[source] ReadError),
    #[error("cannot seal a journal, so nothing was changed")]
    Seal(#[source] ChangeError),
    #[error("cannot apply the IRQ affinity plan")]
    Apply(#[source] ChangeError),
}

/// Audits, plans when asked, and applies when asked and there is
/// something to change; what the topology read could not use is said to
/// `observer` as warnings.
pub fn run(root: &Root, request: &IrqRequest, observer: &dyn Observer) -> Result<IrqDocument, IrqError> {
    if request.apply && !root.is_live() {
        return Err(IrqError::UnderSnapshot);
    }
    let read = crate::env::read_degraded(root)?;
    for warning in &read.warnings {
        observer.progress(&format!("numasleuth: warning: {warning}"));
    }
    let host = numasleuth_kernel::gather::read_host(root, &read.readings);
    let topo = read.topology;
    host.interrupts.as_ref().map_err(|e| IrqError::Interrupts(e.clone()))?;
    let devices = audit(&topo, &host);
    let irqbalance_pids = host.irqbalance_pids.clone().unwrap_or_default();
    let changes = if request.fix || request.apply {
        plan(&topo, &devices)
    } else {
        Vec::new()
    };
    let journal = if request.apply && !changes.is_empty() {
        Some(apply(root, &changes, request.journal.clone())?)
    } else {
        None
    };
    Ok(IrqDocument {
        devices,
        irqbalance_pids,
        plan: changes,
        journal,
    })
}

/// Writes the affinities through a sealed journal, and returns its path.
fn apply(root: &Root, changes: &[AffinityChange], path: Option<PathBuf>) -> Result<PathBuf, IrqError> {
    let created_unix_s = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    let path = path.unwrap_or_else(|| PathBuf::from(format!("numasleuth-irq-{created_unix_s}.journal.json")));
    let file_changes = changes
        .iter()
        .map(|c| FileChange {
            path: format!("proc/irq/{}/smp_affinity_list", c.irq),
            before: c.before.clone(),
            after: c.after.clone(),
        })
        .collect();
    let mut journal = Journal::new(KIND_IRQ, MachineIdentity::read(root), created_unix_s, file_changes);
    let key = JournalKey::for_this_user().map_err(IrqError::Seal)?;
    numasleuth_change::apply(root, &mut journal, &path, &key).map_err(IrqError::Apply)?;
    Ok(path)
}
