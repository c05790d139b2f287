//! A small, dependency-free SVG line chart for timelines (memwatch's free
//! pages against watermarks). Self-contained so it embeds in the HTML
//! report as is.

use crate::html::escape;

pub struct Series {
    pub name: String,
    pub points: Vec<(f64, f64)>,
    pub dashed: bool,
}

const PALETTE: [&str; 8] = [
    "#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2", "#17becf",
];

/// The chart's frame and scales.
struct Frame {
    width: f64,
    left: f64,
    right: f64,
    top: f64,
    plot_w: f64,
    plot_h: f64,
    x_min: f64,
    x_max: f64,
    y_max: f64,
}

impl Frame {
    fn sx(&self, x: f64) -> f64 {
        self.left + (x - self.x_min) / (self.x_max - self.x_min) * self.plot_w
    }

    fn sy(&self, y: f64) -> f64 {
        self.top + self.plot_h - y / self.y_max * self.plot_h
    }
}

pub fn line_chart(title: &str, x_label: &str, y_label: &str, series: &[Series]) -> String {
    let (width, height, left, right, top, bottom) = (760.0, 380.0, 80.0, 190.0, 30.0, 45.0);
    let points = series.iter().flat_map(|s| s.points.iter());
    let (mut x_min, mut x_max, mut y_max) = (f64::INFINITY, f64::NEG_INFINITY, 0.0f64);
    for (x, y) in points {
        x_min = x_min.min(*x);
        x_max = x_max.max(*x);
        y_max = y_max.max(*y);
    }
    if !x_min.is_finite() {
        (x_min, x_max) = (0.0, 1.0);
    }
    if x_max <= x_min {
        x_max = x_min + 1.0;
    }
    let frame = Frame {
        width,
        left,
        right,
        top,
        plot_w: width - left - right,
        plot_h: height - top - bottom,
        x_min,
        x_max,
        y_max: if y_max > 0.0 { y_max * 1.05 } else { 1.0 },
    };
    let (plot_w, plot_h) = (frame.plot_w, frame.plot_h);
    let mut svg = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{width}\" height=\"{height}\" font-family=\"sans-serif\">\
         <rect width=\"100%\" height=\"100%\" fill=\"white\"/>\
         <text x=\"{left}\" y=\"18\" font-size=\"14\">{}</text>\
         <line x1=\"{left}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"#333\"/>\
         <line x1=\"{left}\" y1=\"{top}\" x2=\"{left}\" y2=\"{}\" stroke=\"#333\"/>",
        escape(title),
        top + plot_h,
        left + plot_w,
        top + plot_h,
        top + plot_h
    );
    svg.push_str(&ticks(&frame));
    svg.push_str(&format!(
        "<text x=\"{:.1}\" y=\"{:.1}\" font-size=\"12\" text-anchor=\"middle\">{}</text>\
         <text x=\"14\" y=\"{:.1}\" font-size=\"12\" transform=\"rotate(-90 14 {:.1})\" text-anchor=\"middle\">{}</text>",
        left + plot_w / 2.0,
        height - 8.0,
        escape(x_label),
        top + plot_h / 2.0,
        top + plot_h / 2.0,
        escape(y_label)
    ));
    for (i, s) in series.iter().enumerate() {
        svg.push_str(&line(&frame, i, s));
    }
    svg.push_str("</svg>\n");
    svg
}

/// Five labelled ticks on each axis, with horizontal grid lines.
fn ticks(frame: &Frame) -> String {
    let (left, top, plot_w, plot_h) = (frame.left, frame.top, frame.plot_w, frame.plot_h);
    let (x_min, x_max, y_max) = (frame.x_min, frame.x_max, frame.y_max);
    let mut svg = String::new();
    for i in 0..=4 {
        let (fx, fy) = (x_min + (x_max - x_min) * f64::from(i) / 4.0, y_max * f64::from(i) / 4.0);
        // Short runs need two decimals, or 0.25 and 0.3 print alike.
        let x_text = if x_max - x_min < 10.0 {
            format!("{fx:.2}")
        } else {
            format!("{fx:.1}")
        };
        svg.push_str(&format!(
            "<text x=\"{:.1}\" y=\"{:.1}\" font-size=\"11\" text-anchor=\"middle\">{x_text}</text>\
             <text x=\"{:.1}\" y=\"{:.1}\" font-size=\"11\" text-anchor=\"end\">{fy:.0}</text>\
             <line x1=\"{left}\" y1=\"{:.1}\" x2=\"{:.1}\" y2=\"{:.1}\" stroke=\"#eee\"/>",
            frame.sx(fx),
            top + plot_h + 16.0,
            left - 6.0,
            frame.sy(fy) + 4.0,
            frame.sy(fy),
            left + plot_w,
            frame.sy(fy)
        ));
    }
    svg
}

/// Series `i`'s line and its legend entry.
fn line(frame: &Frame, i: usize, s: &Series) -> String {
    let (width, right, top) = (frame.width, frame.right, frame.top);
    let color = PALETTE[i % PALETTE.len()];
    let path: Vec<String> = s
        .points
        .iter()
        .map(|(x, y)| format!("{:.1},{:.1}", frame.sx(*x), frame.sy(*y)))
        .collect();
    let dash = if s.dashed { " stroke-dasharray=\"6 4\"" } else { "" };
    format!(
        "<polyline fill=\"none\" stroke=\"{color}\" stroke-width=\"2\"{dash} points=\"{}\"/>\
         <line x1=\"{:.1}\" y1=\"{:.1}\" x2=\"{:.1}\" y2=\"{:.1}\" stroke=\"{color}\" stroke-width=\"2\"{dash}/>\
         <text x=\"{:.1}\" y=\"{:.1}\" font-size=\"11\">{}</text>",
        path.join(" "),
        width - right + 10.0,
        top + 10.0 + 16.0 * i as f64,
        width - right + 34.0,
        top + 10.0 + 16.0 * i as f64,
        width - right + 40.0,
        top + 14.0 + 16.0 * i as f64,
        escape(&s.name)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_polyline_per_series() {
        let series = vec![
            Series {
                name: "node 1 free".into(),
                points: vec![(0.0, 10.0), (1.0, 5.0)],
                dashed: false,
            },
            Series {
                name: "node 1 low".into(),
                points: vec![(0.0, 7.0), (1.0, 7.0)],
                dashed: true,
            },
        ];
        let svg = line_chart("free pages", "t (s)", "pages", &series);
        assert_eq!(svg.matches("<polyline").count(), 2);
        assert!(svg.contains("stroke-dasharray") && svg.contains("node 1 low"));
    }

    #[test]
    fn empty_chart_is_still_valid_svg() {
        assert!(line_chart("x", "t", "y", &[]).ends_with("</svg>\n"));
    }
}
