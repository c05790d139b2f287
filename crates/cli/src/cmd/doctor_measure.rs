//! `doctor --measure`: the quick `mem` matrices, their interconnect
//! findings, and heatmaps for the HTML report; a short `readers` watch
//! for processes reading lock-taking kernel files; then a quick
//! core-to-core matrix compared with the declared topology
//! (`vcpu-siblings`).

use numasleuth_analyze::doctor::CheckId;
use numasleuth_analyze::findings::Diagnosis;
use numasleuth_analyze::siblings;
use numasleuth_app::mem::MemRequest;
use numasleuth_kernel::Root;
use numasleuth_report::mem_json::MemDocument;

use super::measure_plan::{self, Bar};

pub const CHECK: CheckId = CheckId::InterconnectBandwidth;
pub const SIBLINGS: CheckId = CheckId::VcpuSiblings;
/// Above this many CPUs the pairs (2,016 at 64) take longer than a doctor
/// run should; `c2c` measures them on request.
const SIBLING_MAX_CPUS: usize = 64;

/// Measures when asked and possible, and records why not otherwise.
pub fn run(root: &Root, measure: bool, diagnosis: &mut Diagnosis) -> Option<MemDocument> {
    // The short readers watch first: the matrices take seconds per node
    // pair, and a reader seen at the start of the run is the one asked about.
    if measure {
        match super::topology(root) {
            Ok(topology) => {
                let stop = super::stop_signal::stop_on_signals();
                numasleuth_app::readers::check(root, &topology, &stop, diagnosis);
            }
            Err(e) => diagnosis.skipped_unreadable(numasleuth_app::readers::CHECK, format!("{e:#}")),
        }
    }
    let matrices = mem_check(root, measure, diagnosis);
    if !measure {
        diagnosis.skipped(
            numasleuth_app::readers::CHECK,
            "needs --measure (a short watch for processes reading /proc/slabinfo and other lock-taking files)",
        );
    }
    matrices
}

fn mem_check(root: &Root, measure: bool, diagnosis: &mut Diagnosis) -> Option<MemDocument> {
    if !measure {
        diagnosis.skipped(
            CHECK,
            "needs --measure (a quick node×node latency and bandwidth matrix)",
        );
        diagnosis.skipped(SIBLINGS, "needs --measure (a quick core-to-core latency matrix)");
        return None;
    }
    if !root.is_live() {
        for check in [CHECK, SIBLINGS] {
            diagnosis.skipped(
                check,
                "measuring needs the live machine, not a snapshot given with --root",
            );
        }
        return None;
    }
    siblings_check(root, diagnosis);
    let stop = super::stop_signal::stop_on_signals();
    let measured = measure_plan::machine(root, "mem").and_then(|machine| {
        let request = MemRequest::quick_matrices();
        Ok(numasleuth_app::mem::matrices(
            machine,
            &request,
            &stop,
            &mut Bar::new(),
        )?)
    });
    match measured {
        Ok((doc, span)) => {
            if span.stopped_early {
                diagnosis.skipped(
                    CHECK,
                    "stopped (Ctrl-C) before every node pair was measured; no verdict",
                );
            } else if doc.placement_verified {
                diagnosis.ran(CHECK, doc.interconnect.findings.clone());
            } else {
                // A matrix of unverified placement says nothing about links.
                diagnosis.skipped(CHECK, "buffers could not be verified on their nodes; no verdict");
            }
            Some(doc)
        }
        Err(e) => {
            diagnosis.skipped(CHECK, format!("measurement failed: {e:#}"));
            None
        }
    }
}

/// Pairs of CPUs that answer like one core's hyperthreads though the
/// kernel declares them separate cores.
fn siblings_check(root: &Root, diagnosis: &mut Diagnosis) {
    let outcome = (|| {
        let machine = measure_plan::machine(root, "doctor --measure")?;
        let cpus: Vec<u32> = machine.allowed_cpus.iter().collect();
        if cpus.len() < 2 {
            return Ok(Err(format!("one CPU ({}) has no pair to measure", cpus[0])));
        }
        if cpus.len() > SIBLING_MAX_CPUS {
            return Ok(Err(format!(
                "{} CPUs make {} pairs, too many for doctor (at most {SIBLING_MAX_CPUS} CPUs); run `numasleuth c2c`, \
                 which reports the same comparison",
                cpus.len(),
                cpus.len() * (cpus.len() - 1) / 2
            )));
        }
        let home = machine.cpu_home_node(cpus[0])?;
        machine.check_node(home)?;
        let stop = super::stop_signal::stop_on_signals();
        let matrix = numasleuth_app::c2c::quick_matrix(&cpus, home, &stop, &mut Bar::new())?;
        let pairs = siblings::suspected(&machine.topo, &cpus, &siblings::pair_medians(&matrix));
        anyhow::Ok(Ok(siblings::measured_finding(&machine.topo, &pairs, &cpus, &matrix)))
    })();
    match outcome {
        Ok(Ok(finding)) => diagnosis.ran(SIBLINGS, finding.into_iter().collect()),
        Ok(Err(why)) => diagnosis.skipped(SIBLINGS, why),
        Err(e) => diagnosis.skipped(SIBLINGS, format!("measurement failed: {e:#}")),
    }
}
