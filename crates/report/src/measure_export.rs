//! The measuring commands' reports through the one exporter path: `mem`
//! and `c2c` (text, JSON, CSV), `runs` and `probe-latency` (text, JSON,
//! SVG). Each maps a format to the renderer that already existed.

use crate::export::{with_provenance, Exporter, Format};
use crate::lab_svg::ChartError;
use crate::layout::TextLayout;
use crate::probe_latency::{self, ProbeReport};
use crate::provenance::Provenance;
use crate::runs_text::RunsReport;
use crate::{c2c_json, c2c_text, csv, mem_json, mem_text, runs_json, runs_svg, runs_text};
use numasleuth_analyze::c2c_document::C2cDocument;
use numasleuth_analyze::mem_document::MemDocument;

/// `mem`: matrices, sweeps and loaded latency.
pub struct MemReport<'a>(pub &'a MemDocument);

impl Exporter for MemReport<'_> {
    const EXTRA: &'static [Format] = &[Format::Csv];

    fn json(&self, provenance: &Provenance) -> serde_json::Result<String> {
        with_provenance(&mem_json::document(self.0), provenance)
    }
    fn text(&self, layout: &TextLayout) -> String {
        mem_text::render(self.0, layout)
    }
    fn csv(&self) -> Option<String> {
        Some(csv::mem(self.0))
    }
}

/// `c2c`: the core-to-core matrix.
pub struct C2cReport<'a>(pub &'a C2cDocument);

impl Exporter for C2cReport<'_> {
    const EXTRA: &'static [Format] = &[Format::Csv];

    fn json(&self, provenance: &Provenance) -> serde_json::Result<String> {
        with_provenance(&c2c_json::document(self.0), provenance)
    }
    fn text(&self, layout: &TextLayout) -> String {
        c2c_text::render(self.0, layout)
    }
    fn csv(&self) -> Option<String> {
        Some(csv::c2c(self.0))
    }
}

impl Exporter for RunsReport<'_> {
    const EXTRA: &'static [Format] = &[Format::Svg];

    fn json(&self, provenance: &Provenance) -> serde_json::Result<String> {
        with_provenance(&runs_json::build(self), provenance)
    }
    fn text(&self, layout: &TextLayout) -> String {
        runs_text::render(self, layout)
    }
    fn svg(&self) -> Option<Result<String, ChartError>> {
        Some(Ok(runs_svg::render(self)))
    }
}

impl Exporter for ProbeReport {
    const EXTRA: &'static [Format] = &[Format::Svg];

    fn json(&self, provenance: &Provenance) -> serde_json::Result<String> {
        with_provenance(&probe_latency::json(self), provenance)
    }
    fn text(&self, layout: &TextLayout) -> String {
        probe_latency::text(self, layout)
    }
    fn svg(&self) -> Option<Result<String, ChartError>> {
        Some(Ok(probe_latency::svg(self)))
    }
}
