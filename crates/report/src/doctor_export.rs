//! `doctor` through the one exporter path: text, JSON (whose document
//! carries its own `provenance`, as `numasleuth.doctor/1` always has) and
//! the HTML page.

use numasleuth_analyze::findings::Diagnosis;
use numasleuth_model::Topology;
use numasleuth_parse::Unread;

use crate::doctor_html::Section;
use crate::export::{plain_json, Exporter, Format};
use crate::html::heatmap_svg_rect;
use crate::layout::TextLayout;
use crate::provenance::Provenance;
use crate::topo_json::TopoJson;
use crate::{doctor_html, doctor_json, doctor_text, mem_text};
use numasleuth_analyze::mem_document::MemDocument;

pub struct DoctorReport<'a> {
    /// The machine in a line or two (`2 node(s), 8 CPUs …`).
    pub headline: String,
    pub topo: &'a Topology,
    pub topology: TopoJson<'a>,
    pub diagnosis: &'a Diagnosis,
    pub unread: &'a [Unread],
    /// `--measure`'s document.
    pub measured: Option<&'a MemDocument>,
}

impl Exporter for DoctorReport<'_> {
    const EXTRA: &'static [Format] = &[Format::Html];

    fn json(&self, provenance: &Provenance) -> serde_json::Result<String> {
        plain_json(&doctor_json::build(
            provenance,
            self.diagnosis,
            self.unread,
            &self.topology,
            self.measured,
        ))
    }

    fn text(&self, layout: &TextLayout) -> String {
        let mut text = doctor_text::render(
            &format!("numasleuth doctor: {}", self.headline),
            self.diagnosis,
            layout.colour,
        );
        if let Some(doc) = self.measured {
            text.push_str("\nMeasurements (doctor --measure, quick settings)\n");
            text.push_str(&mem_text::render(doc, layout));
        }
        text
    }

    fn html(&self, provenance: &Provenance) -> Option<String> {
        Some(doctor_html::render(
            provenance,
            &self.headline,
            self.topo,
            self.diagnosis,
            &self.measured.map(sections).unwrap_or_default(),
        ))
    }
}

/// Heatmaps of the measured matrices, for the HTML report.
fn sections(doc: &MemDocument) -> Vec<Section> {
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
            html: format!("<p>{}</p>", crate::html::escape(warning)),
        });
    }
    out
}
