//! `doctor --measure`: the quick `mem` matrices, their interconnect
//! findings, and heatmaps for the HTML report; and a short `readers`
//! watch for processes reading lock-taking kernel files.

use numasleuth_analyze::findings::Diagnosis;
use numasleuth_kernel::Root;
use numasleuth_report::mem_json::MemDocument;

use super::measure_args::{MemOptions, MixArg, PagesArg};

pub const CHECK: &str = "interconnect-bandwidth";

/// Measures when asked and possible, and records why not otherwise.
pub fn run(root: &Root, measure: bool, diagnosis: &mut Diagnosis) -> Option<MemDocument> {
    // The short readers watch first: the matrices take seconds per node
    // pair, and a reader seen at the start of the run is the one asked about.
    if measure {
        super::readers::check(root, diagnosis);
    }
    let matrices = mem_check(root, measure, diagnosis);
    if !measure {
        diagnosis.skipped(
            super::readers::CHECK,
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
        return None;
    }
    if !root.is_live() {
        diagnosis.skipped(
            CHECK,
            "measuring needs the live machine, not a snapshot given with --root",
        );
        return None;
    }
    let options = MemOptions {
        json: false,
        csv: false,
        output: super::output::OutputArgs::default(),
        raw: false,
        nodes: None,
        cpus: None,
        quick: true,
        samples: None,
        sample_ms: None,
        size: None,
        threads: None,
        mix: MixArg::Read,
        pages: PagesArg::Thp,
    };
    match super::mem::matrices(root, &options) {
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
