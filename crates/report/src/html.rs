//! Building blocks for the self-contained HTML report: escaping, tables and
//! an inline-SVG heatmap. No scripts, fonts or images are fetched, so the
//! file opens the same on an air-gapped machine.

pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            _ => out.push(c),
        }
    }
    out
}

pub fn table(header: &[&str], rows: &[Vec<String>]) -> String {
    let mut out = String::from("<table><thead><tr>");
    for cell in header {
        out.push_str(&format!("<th>{}</th>", escape(cell)));
    }
    out.push_str("</tr></thead><tbody>");
    for row in rows {
        out.push_str("<tr>");
        for cell in row {
            out.push_str(&format!("<td>{}</td>", escape(cell)));
        }
        out.push_str("</tr>");
    }
    out.push_str("</tbody></table>");
    out
}

/// A square matrix as coloured cells, lowest value pale, highest dark;
/// `None` cells are hatched grey and labelled "?" rather than guessed.
pub fn heatmap_svg(title: &str, labels: &[String], matrix: &[Vec<Option<f64>>], unit: &str) -> String {
    heatmap_svg_rect(title, labels, labels, matrix, unit)
}

/// Like [`heatmap_svg`], for matrices whose rows and columns differ (CPU
/// nodes × memory nodes, where memory-only nodes are columns only).
pub fn heatmap_svg_rect(
    title: &str,
    row_labels: &[String],
    column_labels: &[String],
    matrix: &[Vec<Option<f64>>],
    unit: &str,
) -> String {
    const CELL: usize = 56;
    const MARGIN: usize = 70;
    let (rows, columns) = (row_labels.len(), column_labels.len());
    let values: Vec<f64> = matrix.iter().flatten().flatten().copied().collect();
    let low = values.iter().copied().fold(f64::INFINITY, f64::min);
    let high = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let height = MARGIN + rows * CELL + 10;
    // Wide enough for the title and the legend, however few the nodes.
    let width = (MARGIN + columns * CELL + 10).max(420);
    let mut svg = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{width}\" height=\"{}\" role=\"img\" \
         aria-label=\"{}\"><text x=\"4\" y=\"16\" font-size=\"13\">{}</text>",
        height + 20,
        escape(title),
        escape(title)
    );
    for (j, label) in column_labels.iter().enumerate() {
        svg.push_str(&format!(
            "<text x=\"{}\" y=\"{}\" font-size=\"12\" text-anchor=\"middle\">{}</text>",
            MARGIN + j * CELL + CELL / 2,
            MARGIN - 8,
            escape(label)
        ));
    }
    for (i, label) in row_labels.iter().enumerate() {
        svg.push_str(&format!(
            "<text x=\"{}\" y=\"{}\" font-size=\"12\" text-anchor=\"end\">{}</text>",
            MARGIN - 8,
            MARGIN + i * CELL + CELL / 2 + 4,
            escape(label)
        ));
    }
    for (i, row) in matrix.iter().enumerate() {
        for (j, value) in row.iter().enumerate() {
            let (x, y) = (MARGIN + j * CELL, MARGIN + i * CELL);
            let (fill, text) = match value {
                Some(v) => {
                    let t = if high > low { (v - low) / (high - low) } else { 0.0 };
                    let light = 92.0 - 55.0 * t;
                    (format!("hsl(210,70%,{light:.0}%)"), format_value(*v))
                }
                None => ("#ddd".to_string(), "?".to_string()),
            };
            svg.push_str(&format!(
                "<rect x=\"{x}\" y=\"{y}\" width=\"{CELL}\" height=\"{CELL}\" fill=\"{fill}\" stroke=\"#fff\"/>\
                 <text x=\"{}\" y=\"{}\" font-size=\"12\" text-anchor=\"middle\">{}</text>",
                x + CELL / 2,
                y + CELL / 2 + 4,
                escape(&text)
            ));
        }
    }
    svg.push_str(&format!(
        "<text x=\"4\" y=\"{}\" font-size=\"11\">rows: from, columns: to; {}</text></svg>",
        height + 14,
        escape(unit)
    ));
    svg
}

fn format_value(v: f64) -> String {
    if v.fract() == 0.0 && v.abs() < 1e6 {
        format!("{v:.0}")
    } else {
        format!("{v:.1}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_markup() {
        assert_eq!(
            escape("<a href=\"x\">&</a>"),
            "&lt;a href=&quot;x&quot;&gt;&amp;&lt;/a&gt;"
        );
    }

    #[test]
    fn heatmap_marks_unknown_cells() {
        let svg = heatmap_svg(
            "SLIT",
            &["0".into(), "1".into()],
            &[vec![Some(10.0), None], vec![Some(21.0), Some(10.0)]],
            "x",
        );
        assert!(svg.starts_with("<svg"));
        assert_eq!(svg.matches("<rect").count(), 4);
        assert!(svg.contains(">?<"));
        assert!(svg.contains(">21<"));
    }
}
