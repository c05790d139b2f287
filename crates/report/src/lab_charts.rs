//! The lab's SVG charts, drawn from the lab documents alone (moved here
//! from the cli so rendering lives in `report`). Series are picked by the
//! typed layout, operation, lock and placement each row carries.

use numasleuth_analyze::lab::false_sharing as fs;
use numasleuth_analyze::stats::Summary;
use numasleuth_model::lab::{Global, Layout, Load, LockKind, Op, Placement};

use crate::lab_svg::{chart, ChartError, Panel, Point, Reference, Series};
use numasleuth_analyze::lab::documents::{FalseSharingDocument, LocksDocument, RemoteGlobalDocument};

/// Median, p10 and p90 of a row as a chart point.
fn point(threads: usize, s: &Summary) -> Point {
    Point {
        threads: threads as f64,
        median: s.median,
        p10: s.p10,
        p90: s.p90,
    }
}

/// Per operation, two panels like the talk's: total rate, and per-thread
/// time for 10M operations. Packed lines solid, padded dashed.
pub fn false_sharing(doc: &FalseSharingDocument) -> Result<String, ChartError> {
    let mut placements: Vec<Placement> = doc.results.iter().map(|r| r.placement).collect();
    placements.dedup();
    let mut panels = Vec::new();
    for op in Op::ALL {
        let series = |metric: fn(&fs::Row) -> Summary| -> Vec<Series> {
            let mut out = Vec::new();
            for (p, placement) in placements.iter().enumerate() {
                for layout in Layout::ALL {
                    let points = doc
                        .results
                        .iter()
                        .filter(|r| r.op == op && r.layout == layout && r.placement == *placement)
                        .map(|r| point(r.threads, &metric(r)))
                        .collect();
                    let name = if placements.len() > 1 {
                        format!("{} ({placement})", layout.name())
                    } else {
                        layout.name().to_string()
                    };
                    out.push(Series {
                        name,
                        points,
                        dashed: layout == Layout::Padded,
                        colour: 2 * p + usize::from(layout == Layout::Padded),
                    });
                }
            }
            out
        };
        let what = match op {
            Op::Atomic => "atomic fetch-add",
            Op::Store => "plain load+store",
        };
        panels.push(Panel {
            title: format!("{what}: total throughput"),
            y_label: "ops/s, all threads".into(),
            series: series(|r| r.ops_per_sec),
            references: Vec::new(),
        });
        panels.push(Panel {
            title: format!("{what}: time for 10M ops per thread"),
            y_label: "ms".into(),
            series: series(|r| r.ms_per_10m_ops_per_thread),
            references: Vec::new(),
        });
    }
    chart(
        "numasleuth lab false-sharing: own counter per thread, packed in one line vs padded to 128 B",
        &panels,
        2,
    )
}

/// One panel per load, one line per lock (dashed for the second placement),
/// as the talk's "no load" and "1 load" charts.
pub fn locks(doc: &LocksDocument) -> Result<String, ChartError> {
    let mut placements: Vec<Placement> = doc.results.iter().map(|r| r.placement).collect();
    placements.dedup();
    let mut panels = Vec::new();
    for load in Load::ALL {
        let mut series = Vec::new();
        for (p, placement) in placements.iter().enumerate() {
            for (colour, lock) in LockKind::ALL.iter().enumerate() {
                let points: Vec<_> = doc
                    .results
                    .iter()
                    .filter(|r| r.load == load && r.lock == *lock && r.placement == *placement)
                    .map(|r| point(r.threads, &r.ops_per_sec))
                    .collect();
                if points.is_empty() {
                    continue;
                }
                let name = if placements.len() > 1 {
                    format!("{} ({placement})", lock.name())
                } else {
                    lock.name().to_string()
                };
                series.push(Series {
                    name,
                    points,
                    dashed: p > 0,
                    colour,
                });
            }
        }
        panels.push(Panel {
            title: match load {
                Load::Empty => "empty critical section (no load)".into(),
                Load::OneLoad => "1 load: atomic add on the lock's line".into(),
            },
            y_label: "lock/unlock pairs per second".into(),
            series,
            references: Vec::new(),
        });
    }
    chart("numasleuth lab locks: locking rate against threads", &panels, 2)
}

/// One panel: throughput per placement against threads, with each
/// model ceiling as a dashed line in its placement's colour.
pub fn remote_global(doc: &RemoteGlobalDocument) -> Result<String, ChartError> {
    let colour = |global: Global| match global {
        Global::Local => 0,
        Global::Remote => 1,
        Global::PerThread => 2,
    };
    let mut series = Vec::new();
    for global in [Global::Local, Global::Remote, Global::PerThread] {
        let points: Vec<_> = doc
            .results
            .iter()
            .filter(|r| r.global == global)
            .map(|r| point(r.threads, &r.ops_per_sec))
            .collect();
        if !points.is_empty() {
            series.push(Series {
                name: format!("{global} global"),
                points,
                dashed: false,
                colour: colour(global),
            });
        }
    }
    let references = doc
        .models
        .iter()
        .map(|m| Reference {
            name: format!(
                "model ceiling, {} ({:.0} ns/invalidation)",
                m.global, m.ns_per_invalidation
            ),
            value: m.ceiling_ops_per_sec,
            colour: colour(m.global),
        })
        .collect();
    let panel = Panel {
        title: format!("{} writes per operation to one global", doc.writes_per_op),
        y_label: "operations per second, all threads".into(),
        series,
        references,
    };
    chart(
        &format!("numasleuth lab remote-global: workers on node {}", doc.node),
        &[panel],
        1,
    )
}

/// A lab experiment's report: its document, its text and its chart.
pub struct LabReport<'a, D> {
    pub document: &'a D,
    pub text: fn(&D, &crate::layout::TextLayout) -> String,
    pub chart: fn(&D) -> Result<String, ChartError>,
}

impl<D: crate::schema::Documented> crate::export::Exporter for LabReport<'_, D> {
    const EXTRA: &'static [crate::export::Format] = &[crate::export::Format::Svg];

    fn json(&self, provenance: &crate::provenance::Provenance) -> serde_json::Result<String> {
        crate::export::with_provenance(&crate::schema::Schema::new(D::SCHEMA, self.document), provenance)
    }
    fn text(&self, layout: &crate::layout::TextLayout) -> String {
        (self.text)(self.document, layout)
    }
    fn svg(&self) -> Option<Result<String, ChartError>> {
        Some((self.chart)(self.document))
    }
}
