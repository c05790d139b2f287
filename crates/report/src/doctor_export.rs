//! `doctor` through the one exporter path: text, JSON (whose document
//! carries its own `provenance`, as `numasleuth.doctor/1` always has) and
//! the HTML page.

use numasleuth_analyze::findings::Diagnosis;
use numasleuth_kernel::Unread;
use numasleuth_model::Topology;

use crate::doctor_html::Section;
use crate::export::{plain_json, Exporter, Format};
use crate::mem_json::MemDocument;
use crate::provenance::Provenance;
use crate::topo_json::TopoJson;
use crate::{doctor_html, doctor_json, doctor_text, mem_text};

pub struct DoctorReport<'a> {
    /// The machine in a line or two (`2 node(s), 8 CPUs …`).
    pub headline: String,
    pub topo: &'a Topology,
    pub topology: TopoJson,
    pub diagnosis: &'a Diagnosis,
    pub unread: &'a [Unread],
    /// `--measure`'s document, and its HTML sections.
    pub measured: Option<&'a MemDocument>,
    pub sections: Vec<Section>,
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

    fn text(&self, colour: bool) -> String {
        let mut text = doctor_text::render(&format!("numasleuth doctor: {}", self.headline), self.diagnosis, colour);
        if let Some(doc) = self.measured {
            text.push_str("\nMeasurements (doctor --measure, quick settings)\n");
            text.push_str(&mem_text::render(doc, colour));
        }
        text
    }

    fn html(&self, provenance: &Provenance) -> Option<String> {
        Some(doctor_html::render(
            provenance,
            &self.headline,
            self.topo,
            self.diagnosis,
            &self.sections,
        ))
    }
}
