//! `doctor --pid PID --measure`: a short `hotpages` where DAMON can watch
//! the process, for `hot-remote-memory`; where it cannot, the reason is
//! the skipped check's note (no DAMON, no vaddr operations, not root, a
//! kdamond set up by something else). A window that saw too few accesses
//! to rank is an info finding (`hot-memory-unseen`), not silence. The
//! watch is `numasleuth_app::hotpages`, with `hotpages`' reaper.

use std::time::Duration;

use numasleuth_analyze::doctor::CheckId;
use numasleuth_analyze::findings::Diagnosis;
use numasleuth_app::hotpages::{self, HotpagesRequest};
use numasleuth_kernel::Root;
use numasleuth_model::hotpages::HotRemoteRegion;
use numasleuth_model::Topology;

pub const CHECK: CheckId = CheckId::ProcessHotMemory;
/// Long enough for DAMON to split its regions down to the hot ones (it
/// aggregates every 100 ms), short enough for a diagnosis.
const WINDOW: Duration = Duration::from_secs(3);
/// Regions judged: the finding names at most a few.
const TOP: usize = 20;

/// Runs the check into `diagnosis` and returns the hot remote regions it
/// found (none when skipped), for a join with other observations.
pub fn run(
    root: &Root,
    topology: &Topology,
    pid: u32,
    measure: bool,
    diagnosis: &mut Diagnosis,
) -> Vec<HotRemoteRegion> {
    if !measure {
        diagnosis.skipped(CHECK, "needs --measure (DAMON watches the process's memory for 3 s)");
        return Vec::new();
    }
    if !root.is_live() {
        diagnosis.skipped(CHECK, "DAMON watches a live process; --root names a snapshot");
        return Vec::new();
    }
    let request = HotpagesRequest {
        pid,
        duration: WINDOW,
        top: TOP,
    };
    let stop = super::stop_signal::stop_on_signals();
    let reaper = super::hotpages::reaper_spec();
    match hotpages::observe(root, topology, request, reaper, &stop, &crate::output::Say) {
        Ok(observed) => {
            diagnosis.ran(CHECK, observed.findings);
            observed.hot_remote
        }
        Err(e) => {
            diagnosis.skipped(CHECK, format!("process {pid}: {e:#}"));
            Vec::new()
        }
    }
}
