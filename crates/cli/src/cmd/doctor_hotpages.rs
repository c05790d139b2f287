//! `doctor --pid PID --measure`: a short `hotpages` where DAMON can watch
//! the process, for `hot-remote-memory`; where it cannot, the reason is
//! the skipped check's note (no DAMON, no vaddr operations, not root, a
//! kdamond set up by something else).

use std::time::Duration;

use numasleuth_analyze::findings::Diagnosis;
use numasleuth_kernel::Root;
use numasleuth_model::Topology;

pub const CHECK: &str = "process-hot-memory";
/// Long enough for DAMON to split its regions down to the hot ones (it
/// aggregates every 100 ms), short enough for a diagnosis.
const WINDOW: Duration = Duration::from_secs(3);
/// Regions judged: the finding names at most a few.
const TOP: usize = 20;

pub fn run(root: &Root, topology: &Topology, pid: u32, measure: bool, diagnosis: &mut Diagnosis) {
    if !measure {
        diagnosis.skipped(CHECK, "needs --measure (DAMON watches the process's memory for 3 s)");
        return;
    }
    if !root.is_live() {
        diagnosis.skipped(CHECK, "DAMON watches a live process; --root names a snapshot");
        return;
    }
    match super::hotpages::observe(root, topology, pid, WINDOW, TOP) {
        Ok(observed) => diagnosis.ran(CHECK, observed.findings),
        Err(e) => diagnosis.skipped(CHECK, format!("process {pid}: {e:#}")),
    }
}
