//! `runs --svg`: a strip plot of the metric, one dot per run coloured by
//! its mode, one row per start node, so that "the slow runs all started
//! on node 1" is visible at a glance. Hand-written SVG like `svg_chart`,
//! self-contained.

use std::collections::BTreeSet;

use numasleuth_analyze::runs::Label;

use crate::html::escape;
use crate::runs_text::{metric, RunsReport};

const SLOW: &str = "#d62728";
const FAST: &str = "#1f77b4";
const ALL: &str = "#555555";

fn colour(label: Label) -> &'static str {
    match label {
        Label::Slow => SLOW,
        Label::Fast => FAST,
        Label::All => ALL,
    }
}

/// Where things go: the plot's margins, rows and value range.
struct Plot {
    left: f64,
    top: f64,
    row_h: f64,
    plot_w: f64,
    axis_y: f64,
    lo: f64,
    hi: f64,
}

impl Plot {
    /// The x position of a metric value.
    fn sx(&self, x: f64) -> f64 {
        self.left + (x - self.lo) / (self.hi - self.lo) * self.plot_w
    }
}

pub fn render(report: &RunsReport<'_>) -> String {
    let rows = report.rows;
    let nodes: BTreeSet<Option<u32>> = rows.iter().map(|r| r.start_node).collect();
    let nodes: Vec<Option<u32>> = nodes.into_iter().collect();
    let (width, left, right, top, row_h, bottom) = (760.0, 110.0, 30.0, 50.0, 60.0, 50.0);
    let height = top + row_h * nodes.len().max(1) as f64 + bottom;
    let values = rows.iter().map(|r| r.metric).filter(|v| v.is_finite());
    let (mut lo, mut hi) = values.fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| (lo.min(v), hi.max(v)));
    if !lo.is_finite() {
        (lo, hi) = (0.0, 1.0);
    }
    let pad = ((hi - lo) * 0.05).max(hi.abs() * 1e-6).max(1e-12);
    let plot = Plot {
        left,
        top,
        row_h,
        plot_w: width - left - right,
        axis_y: height - bottom,
        lo: lo - pad,
        hi: hi + pad,
    };
    let direction = if report.lower_is_better {
        "lower is better"
    } else {
        "higher is better"
    };
    let title = format!("{} runs: {} ({direction})", rows.len(), report.metric_name);
    let mut svg = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{width}\" height=\"{height}\" font-family=\"sans-serif\">\
         <rect width=\"100%\" height=\"100%\" fill=\"white\"/>\
         <text x=\"{left}\" y=\"20\" font-size=\"14\">{}</text>",
        escape(&title)
    );
    svg.push_str(&axis(&plot));
    for (r, node) in nodes.iter().enumerate() {
        svg.push_str(&strip(&plot, report, r, *node));
    }
    svg.push_str(&legend(&plot, report));
    svg.push_str(&format!(
        "<text x=\"{:.1}\" y=\"{:.1}\" font-size=\"12\" text-anchor=\"middle\">{}</text></svg>\n",
        left + plot.plot_w / 2.0,
        height - 10.0,
        escape(report.metric_name)
    ));
    svg
}

/// The x axis with five labelled ticks and their grid lines.
fn axis(plot: &Plot) -> String {
    let (left, top, axis_y) = (plot.left, plot.top, plot.axis_y);
    let mut svg = format!(
        "<line x1=\"{left}\" y1=\"{axis_y}\" x2=\"{:.1}\" y2=\"{axis_y}\" stroke=\"#333\"/>",
        left + plot.plot_w
    );
    for i in 0..=4 {
        let x = plot.lo + (plot.hi - plot.lo) * f64::from(i) / 4.0;
        svg.push_str(&format!(
            "<text x=\"{:.1}\" y=\"{:.1}\" font-size=\"11\" text-anchor=\"middle\">{}</text>\
             <line x1=\"{:.1}\" y1=\"{top}\" x2=\"{:.1}\" y2=\"{axis_y}\" stroke=\"#eee\"/>",
            plot.sx(x),
            axis_y + 16.0,
            escape(&metric(x)),
            plot.sx(x),
            plot.sx(x)
        ));
    }
    svg
}

/// Row `r`: the runs that started on `node`, one dot each.
fn strip(plot: &Plot, report: &RunsReport<'_>, r: usize, node: Option<u32>) -> String {
    let y = plot.top + plot.row_h * (r as f64 + 0.5);
    let name = node.map_or("node ?".to_string(), |n| format!("started on node {n}"));
    let mut svg = format!(
        "<text x=\"{:.1}\" y=\"{:.1}\" font-size=\"11\" text-anchor=\"end\">{}</text>",
        plot.left - 8.0,
        y + 4.0,
        escape(&name)
    );
    for row in report
        .rows
        .iter()
        .filter(|row| row.start_node == node && row.metric.is_finite())
    {
        // Spread dots of one row vertically by run index so equal
        // values do not hide each other.
        let jitter = ((row.index * 7) % 11) as f64 / 10.0 - 0.5;
        let label = report.analysis.labels.get(row.index).copied().unwrap_or(Label::All);
        svg.push_str(&format!(
            "<circle cx=\"{:.1}\" cy=\"{:.1}\" r=\"5\" fill=\"{}\" fill-opacity=\"0.8\"><title>run {}: {}</title></circle>",
            plot.sx(row.metric),
            y + jitter * plot.row_h * 0.6,
            colour(label),
            row.number(),
            escape(&metric(row.metric))
        ));
    }
    svg
}

/// One legend entry per mode, with its median as a dashed line.
fn legend(plot: &Plot, report: &RunsReport<'_>) -> String {
    let (top, axis_y) = (plot.top, plot.axis_y);
    let mut svg = String::new();
    let mut legend_x = plot.left;
    for cluster in &report.analysis.clusters {
        let text = format!(
            "{} ({} runs, median {})",
            cluster.label.as_str(),
            cluster.runs.len(),
            metric(cluster.median)
        );
        svg.push_str(&format!(
            "<circle cx=\"{:.1}\" cy=\"36\" r=\"5\" fill=\"{}\"/><text x=\"{:.1}\" y=\"40\" font-size=\"11\">{}</text>",
            legend_x + 5.0,
            colour(cluster.label),
            legend_x + 14.0,
            escape(&text)
        ));
        legend_x += 230.0;
        if cluster.median.is_finite() {
            svg.push_str(&format!(
                "<line x1=\"{0:.1}\" y1=\"{top}\" x2=\"{0:.1}\" y2=\"{axis_y}\" stroke=\"{1}\" stroke-dasharray=\"4 3\"/>",
                plot.sx(cluster.median),
                colour(cluster.label)
            ));
        }
    }
    svg
}
