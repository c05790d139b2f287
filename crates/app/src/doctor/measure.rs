//! `doctor --measure`: a short `readers` watch for processes reading
//! lock-taking kernel files, a quick core-to-core matrix compared with the
//! declared topology (`vcpu-siblings`), then the quick `mem` matrices with
//! their interconnect findings and the heatmaps of the HTML report. Each
//! check that cannot run says why in the diagnosis.

use numasleuth_analyze::doctor::CheckId;
use numasleuth_analyze::findings::{Diagnosis, Finding};
use numasleuth_analyze::mem_document::MemDocument;
use numasleuth_analyze::siblings;
use numasleuth_kernel::Root;
use numasleuth_model::stop::Stop;
use numasleuth_model::Topology;

use crate::machine::Machine;
use crate::mem::MemRequest;
use crate::steps::StepObserver;

pub const INTERCONNECT: CheckId = CheckId::InterconnectBandwidth;
pub const SIBLINGS: CheckId = CheckId::VcpuSiblings;
/// Above this many CPUs the pairs (2,016 at 64) take longer than a doctor
/// run should; `c2c` measures them on request.
const SIBLING_MAX_CPUS: usize = 64;

/// Measures when asked and possible, and records why not otherwise.
pub fn run(
    root: &Root,
    topology: &Topology,
    measure: bool,
    (stop, steps): (&Stop, &mut dyn StepObserver),
    diagnosis: &mut Diagnosis,
) -> Option<MemDocument> {
    // The short readers watch first: the matrices take seconds per node
    // pair, and a reader seen at the start of the run is the one asked about.
    if measure {
        crate::readers::check(root, topology, stop, diagnosis);
    }
    let matrices = mem_check(root, topology, measure, (stop, steps), diagnosis);
    if !measure {
        diagnosis.skipped(
            crate::readers::CHECK,
            "needs --measure (a short watch for processes reading /proc/slabinfo and other lock-taking files)",
        );
    }
    matrices
}

fn mem_check(
    root: &Root,
    topology: &Topology,
    measure: bool,
    (stop, steps): (&Stop, &mut dyn StepObserver),
    diagnosis: &mut Diagnosis,
) -> Option<MemDocument> {
    if !measure {
        diagnosis.skipped(
            INTERCONNECT,
            "needs --measure (a quick node×node latency and bandwidth matrix)",
        );
        diagnosis.skipped(SIBLINGS, "needs --measure (a quick core-to-core latency matrix)");
        return None;
    }
    if !root.is_live() {
        for check in [INTERCONNECT, SIBLINGS] {
            diagnosis.skipped(
                check,
                "measuring needs the live machine, not a snapshot given with --root",
            );
        }
        return None;
    }
    match siblings_check(root, topology, stop, steps) {
        Ok(Ok(finding)) => diagnosis.ran(SIBLINGS, finding.into_iter().collect()),
        Ok(Err(why)) => diagnosis.skipped(SIBLINGS, why),
        Err(e) => diagnosis.skipped(SIBLINGS, format!("measurement failed: {e}")),
    }
    let measured = Machine::new(root, topology.clone())
        .map_err(|e| crate::error_chain(&e))
        .and_then(|machine| {
            crate::mem::matrices(machine, &MemRequest::quick_matrices(), stop, steps)
                .map_err(|e| crate::error_chain(&e))
        });
    match measured {
        Ok((doc, span)) => {
            if span.stopped_early {
                diagnosis.skipped(
                    INTERCONNECT,
                    "stopped (Ctrl-C) before every node pair was measured; no verdict",
                );
            } else if doc.placement_verified {
                diagnosis.ran(INTERCONNECT, doc.interconnect.findings.clone());
            } else {
                // A matrix of unverified placement says nothing about links.
                diagnosis.skipped(INTERCONNECT, "buffers could not be verified on their nodes; no verdict");
            }
            Some(doc)
        }
        Err(e) => {
            diagnosis.skipped(INTERCONNECT, format!("measurement failed: {e}"));
            None
        }
    }
}

/// Pairs of CPUs that answer like one core's hyperthreads though the
/// kernel declares them separate cores: the finding, or why there was
/// nothing to measure (inner), or why the measurement failed (outer, its
/// causes joined).
fn siblings_check(
    root: &Root,
    topology: &Topology,
    stop: &Stop,
    steps: &mut dyn StepObserver,
) -> Result<Result<Option<Finding>, String>, String> {
    let chain = |e: &dyn std::error::Error| crate::error_chain(e);
    let machine = Machine::new(root, topology.clone()).map_err(|e| chain(&e))?;
    let cpus: Vec<u32> = machine.allowed_cpus.iter().collect();
    match cpus[..] {
        [] => return Ok(Err("no CPU is allowed here to measure on".to_string())),
        [one] => return Ok(Err(format!("one CPU ({one}) has no pair to measure"))),
        _ => {}
    }
    if cpus.len() > SIBLING_MAX_CPUS {
        return Ok(Err(format!(
            "{} CPUs make {} pairs, too many for doctor (at most {SIBLING_MAX_CPUS} CPUs); run `numasleuth c2c`, \
             which reports the same comparison",
            cpus.len(),
            cpus.len() * (cpus.len() - 1) / 2
        )));
    }
    let home = machine.cpu_home_node(cpus[0]).map_err(|e| chain(&e))?;
    machine.check_node(home).map_err(|e| chain(&e))?;
    let matrix = crate::c2c::quick_matrix(&cpus, home, stop, steps).map_err(|e| chain(&e))?;
    let pairs = siblings::suspected(&machine.topo, &cpus, &siblings::pair_medians(&matrix));
    Ok(Ok(siblings::measured_finding(&machine.topo, &pairs, &cpus, &matrix)))
}
