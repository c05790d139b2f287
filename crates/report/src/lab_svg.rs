//! The lab's charts, shaped like the talk's: a rate (or time) against the
//! number of threads, one line per variant, with the samples' p10–p90 as
//! whiskers so a reader sees how far to trust each point. Drawn with
//! plotters' SVG backend only, so no font or image library is linked; the
//! SVG carries its text as `<text>` and the viewer renders it.

use std::fmt;

use plotters::coord::ranged1d::{Ranged, ValueFormatter};
use plotters::coord::types::RangedCoordf64;
use plotters::coord::Shift;
use plotters::prelude::*;

/// One measured point: x is the thread count.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Point {
    pub threads: f64,
    pub median: f64,
    pub p10: f64,
    pub p90: f64,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Series {
    pub name: String,
    pub points: Vec<Point>,
    /// Drawn dashed, to pair with a solid series of the same colour.
    pub dashed: bool,
    /// Index into the palette; series that belong together share one.
    pub colour: usize,
}

/// A horizontal reference line, e.g. a model's ceiling.
#[derive(Debug, Clone, PartialEq)]
pub struct Reference {
    pub name: String,
    pub value: f64,
    pub colour: usize,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Panel {
    pub title: String,
    pub y_label: String,
    pub series: Vec<Series>,
    pub references: Vec<Reference>,
}

/// `plotters`' reason, as text: its error type is generic over the
/// backend and is not kept.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChartError(String);

impl fmt::Display for ChartError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "cannot draw the chart: {}", self.0)
    }
}

impl std::error::Error for ChartError {}

const PALETTE: [RGBColor; 8] = [
    RGBColor(31, 119, 180),
    RGBColor(214, 39, 40),
    RGBColor(44, 160, 44),
    RGBColor(148, 103, 189),
    RGBColor(255, 127, 14),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(23, 190, 207),
];

const PANEL_WIDTH_PX: u32 = 520;
const PANEL_HEIGHT_PX: u32 = 400;
const TITLE_PX: u32 = 40;

/// Panels in a grid `columns` wide under one title, each on a log axis
/// (variants can differ a hundredfold, as the talk's did).
pub fn chart(title: &str, panels: &[Panel], columns: usize) -> Result<String, ChartError> {
    let mut svg = String::new();
    {
        let columns = columns.clamp(1, panels.len().max(1));
        let rows = panels.len().div_ceil(columns).max(1);
        let size = (
            PANEL_WIDTH_PX * columns as u32,
            PANEL_HEIGHT_PX * rows as u32 + TITLE_PX,
        );
        let root = SVGBackend::with_string(&mut svg, size).into_drawing_area();
        root.fill(&WHITE).map_err(err)?;
        let body = root.titled(title, ("sans-serif", 18)).map_err(err)?;
        let areas = body.split_evenly((rows, columns));
        // One axis kind for every panel, so side-by-side panels compare.
        let log = panels.iter().any(|p| {
            let (low, high) = value_range(p);
            high / low > LOG_AXIS_RATIO
        });
        for (panel, area) in panels.iter().zip(&areas) {
            draw_panel(panel, area, log)?;
        }
        root.present().map_err(err)?;
    }
    Ok(svg)
}

fn err(e: impl fmt::Display) -> ChartError {
    ChartError(e.to_string())
}

/// Above this max/min ratio the rate axis is logarithmic; below it a
/// linear axis from zero shows differences in proportion.
const LOG_AXIS_RATIO: f64 = 20.0;

type Chart<'a, 'b, Y> = ChartContext<'a, SVGBackend<'b>, Cartesian2d<RangedCoordf64, Y>>;

fn positive(v: f64) -> bool {
    v.is_finite() && v > 0.0
}

/// The smallest and largest positive value a panel shows.
fn value_range(panel: &Panel) -> (f64, f64) {
    let values = panel
        .series
        .iter()
        .flat_map(|s| s.points.iter())
        .flat_map(|p| [p.p10, p.median, p.p90])
        .chain(panel.references.iter().map(|r| r.value))
        .filter(|v| positive(*v));
    let (low, high) = values.fold((f64::INFINITY, 0.0f64), |(lo, hi), v| (lo.min(v), hi.max(v)));
    if low.is_finite() {
        (low, high)
    } else {
        (1.0, 10.0)
    }
}

fn draw_panel(panel: &Panel, area: &DrawingArea<SVGBackend<'_>, Shift>, log: bool) -> Result<(), ChartError> {
    let x_max = panel
        .series
        .iter()
        .flat_map(|s| s.points.iter())
        .map(|p| p.threads)
        .fold(1.0, f64::max);
    let (low, high) = value_range(panel);
    let mut builder = ChartBuilder::on(area);
    builder
        .caption(&panel.title, ("sans-serif", 15))
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(70);
    let x_range = 0.5..x_max + 0.5;
    if log {
        let chart = builder
            .build_cartesian_2d(x_range, (low / 1.6..high * 1.6).log_scale())
            .map_err(err)?;
        fill(chart, panel, x_max, " (log scale)")
    } else {
        let chart = builder.build_cartesian_2d(x_range, 0.0..high * 1.15).map_err(err)?;
        fill(chart, panel, x_max, "")
    }
}

fn fill<'a, 'b: 'a, Y>(
    mut chart: Chart<'a, 'b, Y>,
    panel: &Panel,
    x_max: f64,
    axis_note: &str,
) -> Result<(), ChartError>
where
    Y: Ranged<ValueType = f64> + ValueFormatter<f64>,
{
    chart
        .configure_mesh()
        .x_desc("threads")
        .y_desc(format!("{}{axis_note}", panel.y_label))
        .x_labels((x_max as usize + 1).min(12))
        .y_labels(8)
        .x_label_formatter(&|x| {
            if (x - x.round()).abs() < 1e-6 && *x >= 1.0 {
                format!("{x:.0}")
            } else {
                String::new()
            }
        })
        .y_label_formatter(&|y| si(*y))
        .light_line_style(WHITE.mix(0.0))
        .draw()
        .map_err(err)?;
    for series in &panel.series {
        let colour = PALETTE[series.colour % PALETTE.len()];
        let line: Vec<(f64, f64)> = series
            .points
            .iter()
            .filter(|p| positive(p.median))
            .map(|p| (p.threads, p.median))
            .collect();
        let style = colour.stroke_width(2);
        let drawn = if series.dashed {
            chart.draw_series(DashedLineSeries::new(line.clone(), 8, 5, style))
        } else {
            chart.draw_series(LineSeries::new(line.clone(), style))
        };
        drawn
            .map_err(err)?
            .label(series.name.as_str())
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 22, y)], colour.stroke_width(2)));
        chart
            .draw_series(line.iter().map(|&(x, y)| Circle::new((x, y), 3, colour.filled())))
            .map_err(err)?;
        chart
            .draw_series(
                series
                    .points
                    .iter()
                    .filter(|p| positive(p.p10) && positive(p.p90))
                    .map(|p| ErrorBar::new_vertical(p.threads, p.p10, p.median, p.p90, colour.stroke_width(1), 8)),
            )
            .map_err(err)?;
    }
    for reference in &panel.references {
        let colour = PALETTE[reference.colour % PALETTE.len()];
        let line = vec![(0.5, reference.value), (x_max + 0.5, reference.value)];
        chart
            .draw_series(DashedLineSeries::new(line, 3, 4, colour.stroke_width(1)))
            .map_err(err)?
            .label(reference.name.as_str())
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 22, y)], colour.stroke_width(1)));
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::LowerLeft)
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK.mix(0.4))
        .label_font(("sans-serif", 12))
        .draw()
        .map_err(err)?;
    Ok(())
}

/// Axis numbers with SI suffixes: 2.5M, 40k, 120.
pub fn si(value: f64) -> String {
    let (scaled, suffix) = match value.abs() {
        v if v >= 1e9 => (value / 1e9, "G"),
        v if v >= 1e6 => (value / 1e6, "M"),
        v if v >= 1e3 => (value / 1e3, "k"),
        _ => (value, ""),
    };
    let text = if scaled.abs() >= 100.0 || scaled == scaled.round() {
        format!("{scaled:.0}")
    } else if scaled.abs() >= 10.0 {
        format!("{scaled:.1}")
    } else {
        format!("{scaled:.2}")
    };
    format!("{text}{suffix}")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn point(threads: f64, median: f64) -> Point {
        Point {
            threads,
            median,
            p10: median * 0.9,
            p90: median * 1.1,
        }
    }

    #[test]
    fn draws_an_svg_with_every_series_named() {
        let panel = Panel {
            title: "atomic".into(),
            y_label: "ops/s".into(),
            series: vec![
                Series {
                    name: "packed".into(),
                    points: vec![point(1.0, 2e8), point(2.0, 3e7)],
                    dashed: false,
                    colour: 0,
                },
                Series {
                    name: "padded".into(),
                    points: vec![point(1.0, 2e8), point(2.0, 4e8)],
                    dashed: true,
                    colour: 0,
                },
            ],
            references: vec![Reference {
                name: "model ceiling".into(),
                value: 1e8,
                colour: 1,
            }],
        };
        let svg = chart("false sharing", &[panel.clone(), panel.clone(), panel], 2).unwrap();
        assert!(svg.starts_with("<svg"), "{}", &svg[..80]);
        for text in ["false sharing", "packed", "padded", "model ceiling", "threads"] {
            assert!(svg.contains(text), "{text} missing");
        }
    }

    #[test]
    fn empty_and_zero_data_still_draw() {
        let panel = Panel {
            title: "nothing".into(),
            y_label: "ops/s".into(),
            series: vec![Series {
                name: "none".into(),
                points: vec![point(1.0, 0.0)],
                dashed: false,
                colour: 3,
            }],
            references: Vec::new(),
        };
        assert!(chart("empty", &[panel], 1).unwrap().contains("</svg>"));
        assert!(chart("none", &[], 1).unwrap().contains("</svg>"));
    }

    #[test]
    fn si_suffixes() {
        assert_eq!(si(2_500_000.0), "2.50M");
        assert_eq!(si(40_000.0), "40k");
        assert_eq!(si(120.0), "120");
        assert_eq!(si(12_300_000.0), "12.3M");
    }
}
