//! `doctor --measure`: the quick `mem` matrices, their interconnect
//! findings, and heatmaps for the HTML report.

use numasleuth_analyze::findings::Diagnosis;
use numasleuth_kernel::Root;
use numasleuth_report::doctor_html::Section;
use numasleuth_report::html::heatmap_svg_rect;
use numasleuth_report::mem_json::MemDocument;

use super::measure_args::{MemOptions, MixArg, PagesArg};

pub const CHECK: &str = "interconnect-bandwidth";

/// Measures when asked and possible, and records why not otherwise.
pub fn run(root: &Root, measure: bool, diagnosis: &mut Diagnosis) -> Option<MemDocument> {
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
        Ok(doc) => {
            if doc.placement_verified {
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

/// Heatmaps of the measured matrices, for the HTML report.
pub fn sections(doc: &MemDocument) -> Vec<Section> {
    let mut out = Vec::new();
    let label = |prefix: &str, ids: &[u32]| ids.iter().map(|n| format!("{prefix} {n}")).collect::<Vec<_>>();
    if let Some(m) = &doc.latency_ns {
        let cells = m
            .matrix
            .iter()
            .map(|row| row.iter().map(|c| c.as_ref().map(|s| s.median)).collect())
            .collect::<Vec<_>>();
        out.push(Section {
            title: "Measured idle latency".into(),
            html: heatmap_svg_rect(
                "idle latency, median ns (pointer chase)",
                &label("CPUs of node", &m.initiators),
                &label("memory", &m.nodes),
                &cells,
                "ns, lower is better",
            ),
        });
    }
    if let Some(m) = &doc.bandwidth_bytes_per_sec {
        let cells = m
            .matrix
            .iter()
            .map(|row| row.iter().map(|c| c.as_ref().map(|s| s.median / 1e9)).collect())
            .collect::<Vec<_>>();
        out.push(Section {
            title: "Measured bandwidth".into(),
            html: heatmap_svg_rect(
                &format!("{} bandwidth, median GB/s", m.mix),
                &label("CPUs of node", &m.initiators),
                &label("memory", &m.nodes),
                &cells,
                "GB/s, higher is better",
            ),
        });
    }
    for warning in &doc.warnings {
        out.push(Section {
            title: "Measurement warning".into(),
            html: format!("<p>{}</p>", numasleuth_report::html::escape(warning)),
        });
    }
    out
}
