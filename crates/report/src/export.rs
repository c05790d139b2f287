//! One way out for every report: text, JSON, and the CSV, HTML or SVG a
//! report offers, each with its provenance.
//!
//! A command builds its report and hands it to one exporter path; it no
//! longer chooses formats itself. Provenance is added here, once: the text
//! starts with its line, the JSON carries a `provenance` object (in the
//! first record of a JSON-lines stream), an SVG gets a `<desc>` and a footer
//! line, and an HTML page shows it in its header. CSV has no place for it
//! that a CSV reader would not take for data, so it is left out there.

use std::fmt;

use numasleuth_parse::safe_text;
use serde::Serialize;

use crate::html::escape;
use crate::lab_svg::ChartError;
use crate::layout::TextLayout;
use crate::provenance::{run_line, Provenance};

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Format {
    Text,
    Json,
    Csv,
    Html,
    Svg,
}

pub const ALL: [Format; 5] = [Format::Text, Format::Json, Format::Csv, Format::Html, Format::Svg];

impl Format {
    pub fn name(self) -> &'static str {
        match self {
            Format::Text => "text",
            Format::Json => "json",
            Format::Csv => "csv",
            Format::Html => "html",
            Format::Svg => "svg",
        }
    }

    /// The file name ending that selects this format.
    pub fn extension(self) -> &'static str {
        match self {
            Format::Text => "txt",
            Format::Json => "json",
            Format::Csv => "csv",
            Format::Html => "html",
            Format::Svg => "svg",
        }
    }

    /// From a file's extension, case-insensitively (`.htm` too).
    pub fn from_extension(extension: &str) -> Option<Format> {
        let lower = extension.to_ascii_lowercase();
        match lower.as_str() {
            "htm" => Some(Format::Html),
            _ => ALL.into_iter().find(|f| f.extension() == lower),
        }
    }
}

impl fmt::Display for Format {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A report in every format it supports. Text and JSON always; CSV, HTML
/// and SVG where the report lists them in `EXTRA` and returns them.
pub trait Exporter {
    /// The formats beyond text and JSON.
    const EXTRA: &'static [Format] = &[];

    /// The JSON text, with `provenance` at its top level: most reports
    /// return `with_provenance(&document, provenance)`; a JSON-lines stream
    /// puts it in its first record.
    fn json(&self, provenance: &Provenance) -> serde_json::Result<String>;
    /// The text report, without the provenance line, with its tables
    /// fitted to `layout` (the exporter wraps its prose after).
    fn text(&self, layout: &TextLayout) -> String;
    fn csv(&self) -> Option<String> {
        None
    }
    /// The page; it shows `provenance` in its header.
    fn html(&self, _provenance: &Provenance) -> Option<String> {
        None
    }
    /// The chart, without provenance (the exporter adds it), or why it
    /// could not be drawn.
    fn svg(&self) -> Option<Result<String, ChartError>> {
        None
    }
}

/// What a report without CSV, HTML or SVG writes.
pub const TEXT_JSON: &[Format] = &[Format::Text, Format::Json];

/// A report that is a JSON document and a text rendering of it, which is
/// what most commands have; `text` gets the layout to fit.
pub struct TextJson<D, F> {
    document: D,
    text: F,
}

impl<D: Serialize, F: Fn(&TextLayout) -> String> TextJson<D, F> {
    pub fn new(document: D, text: F) -> Self {
        TextJson { document, text }
    }
}

impl<D: Serialize, F: Fn(&TextLayout) -> String> Exporter for TextJson<D, F> {
    fn json(&self, provenance: &Provenance) -> serde_json::Result<String> {
        with_provenance(&self.document, provenance)
    }
    fn text(&self, layout: &TextLayout) -> String {
        (self.text)(layout)
    }
}

/// Every format `E` writes, text and JSON first.
pub fn formats<E: Exporter>() -> Vec<Format> {
    let mut all = vec![Format::Text, Format::Json];
    for extra in E::EXTRA {
        if !all.contains(extra) {
            all.push(*extra);
        }
    }
    all
}

/// `text (.txt), json (.json), csv (.csv)`, for error messages.
pub fn list(formats: &[Format]) -> String {
    formats
        .iter()
        .map(|f| format!("{f} (.{})", f.extension()))
        .collect::<Vec<_>>()
        .join(", ")
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ExportError {
    /// The report has no such format.
    Unsupported {
        format: Format,
        offered: Vec<Format>,
    },
    Json(String),
    /// The report has the format but could not render it.
    Render {
        format: Format,
        why: ChartError,
    },
}

impl fmt::Display for ExportError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ExportError::Unsupported { format, offered } => {
                write!(f, "no {format} output here; this report writes {}", list(offered))
            }
            ExportError::Json(e) => write!(f, "cannot encode the JSON report: {e}"),
            ExportError::Render { format, why } => write!(f, "cannot draw the {format} report: {why}"),
        }
    }
}

impl std::error::Error for ExportError {}

/// The report in `format`, with its provenance; text is laid out to fit
/// `layout` (the one text layer: tables fitted by the report, then every
/// line wrapped here).
pub fn render<E: Exporter>(
    report: &E,
    format: Format,
    provenance: &Provenance,
    layout: &TextLayout,
) -> Result<String, ExportError> {
    let unsupported = || ExportError::Unsupported {
        format,
        offered: formats::<E>(),
    };
    if !formats::<E>().contains(&format) {
        return Err(unsupported());
    }
    let out = match format {
        // Made safe before it is wrapped, so an escaped byte counts at the
        // width it is shown with.
        Format::Text => {
            let mut text = heading(provenance);
            text.push_str(&report.text(layout));
            return Ok(layout.wrap(&safe_for(format, layout.colour, text)));
        }
        Format::Json => Some(report.json(provenance).map_err(|e| ExportError::Json(e.to_string()))?),
        Format::Csv => report.csv(),
        Format::Html => report.html(provenance),
        Format::Svg => match report.svg() {
            Some(Ok(svg)) => Some(svg_with_provenance(&svg, provenance)),
            Some(Err(why)) => return Err(ExportError::Render { format, why }),
            None => None,
        },
    };
    let out = out.ok_or_else(unsupported)?;
    Ok(safe_for(format, false, out))
}

/// The rendered report with [`safe_text`]'s rule applied, whatever its
/// strings came from (a snapshot, a process's comm, an input file): JSON
/// keeps its meaning (escapes), colour text keeps our colours, and every
/// other format keeps its newlines and tabs. A file is made safe too, since
/// it will be `cat` to a terminal sooner or later.
pub fn safe_for(format: Format, colour: bool, out: String) -> String {
    let safe = match format {
        Format::Json => safe_text::for_json(&out),
        Format::Text if colour => safe_text::for_terminal_in_colour(&out),
        _ => safe_text::for_terminal(&out),
    };
    match safe {
        std::borrow::Cow::Borrowed(_) => out,
        std::borrow::Cow::Owned(safe) => safe,
    }
}

/// The provenance line, and under it how a run ended when it was cut
/// short, each ending in a newline.
pub fn heading(provenance: &Provenance) -> String {
    let mut text = format!("{}\n", provenance.line());
    if let Some(line) = provenance.run.as_ref().and_then(run_line) {
        text.push_str(&line);
        text.push('\n');
    }
    text
}

#[derive(Serialize)]
struct WithProvenance<'a, T: Serialize> {
    #[serde(flatten)]
    document: &'a T,
    provenance: &'a Provenance,
}

/// Pretty JSON of `document` with a top-level `provenance`, ending in a
/// newline.
pub fn with_provenance<T: Serialize>(document: &T, provenance: &Provenance) -> serde_json::Result<String> {
    let mut text = serde_json::to_string_pretty(&WithProvenance { document, provenance })?;
    text.push('\n');
    Ok(text)
}

/// Pretty JSON of a document that carries its own provenance.
pub fn plain_json<T: Serialize>(document: &T) -> serde_json::Result<String> {
    let mut text = serde_json::to_string_pretty(document)?;
    text.push('\n');
    Ok(text)
}

/// Height of the footer strip added under a chart.
const FOOTER_PX: u32 = 18;

/// The chart with a `<desc>` naming its provenance (for screen readers and
/// tools) and a footer line under it, made room for by growing the height.
pub fn svg_with_provenance(svg: &str, provenance: &Provenance) -> String {
    let mut line = provenance.line();
    if let Some(run) = provenance.run.as_ref().and_then(run_line) {
        line = format!("{line}; {run}");
    }
    let line = escape(&line);
    let Some(open_end) = svg
        .find("<svg")
        .and_then(|start| svg[start..].find('>').map(|e| start + e + 1))
    else {
        return svg.to_string();
    };
    let Some(close) = svg.rfind("</svg>") else {
        return svg.to_string();
    };
    let open = &svg[..open_end];
    let width = numeric_attribute(open, "width");
    let (open, height) = grow_height(open);
    let footer = match height {
        Some(h) => {
            // About 0.55 em a character: a line longer than the chart is
            // squeezed to its width rather than cut off.
            let squeeze = width
                .filter(|w| line.chars().count() as f64 * 5.5 > w - 8.0)
                .map_or(String::new(), |w| {
                    format!(" textLength=\"{:.0}\" lengthAdjust=\"spacingAndGlyphs\"", w - 8.0)
                });
            format!(
                "<text x=\"4\" y=\"{}\" font-size=\"10\" fill=\"#555\" font-family=\"sans-serif\"{squeeze}>{line}</text>",
                h.saturating_add(FOOTER_PX).saturating_sub(5)
            )
        }
        None => String::new(),
    };
    format!(
        "{open}<desc>{line}</desc>{}{footer}{}",
        &svg[open_end..close],
        &svg[close..]
    )
}

/// The opening tag with its `height="N"` grown by the footer, and the old
/// height; unchanged (and `None`) when it has no plain numeric height.
fn grow_height(open: &str) -> (String, Option<u32>) {
    let Some((value_start, len)) = attribute_span(open, "height") else {
        return (open.to_string(), None);
    };
    let Some(height) = numeric_attribute(open, "height") else {
        return (open.to_string(), None);
    };
    let height = height.ceil() as u32;
    let mut grown = String::with_capacity(open.len() + 4);
    grown.push_str(&open[..value_start]);
    grown.push_str(&(height + FOOTER_PX).to_string());
    grown.push_str(&open[value_start + len..]);
    // A viewBox would scale the old drawing into the new height; grow it too.
    (grow_view_box(&grown, FOOTER_PX), Some(height))
}

/// Where the value of ` name="…"` sits in a tag: start and length.
fn attribute_span(tag: &str, name: &str) -> Option<(usize, usize)> {
    let key = format!(" {name}=\"");
    let start = tag.find(&key)? + key.len();
    let len = tag[start..].find('"')?;
    Some((start, len))
}

/// A plain number of pixels, 0 to a million; `None` for `100%` and the like.
fn numeric_attribute(tag: &str, name: &str) -> Option<f64> {
    let (start, len) = attribute_span(tag, name)?;
    let value: f64 = tag[start..start + len].trim_end_matches("px").parse().ok()?;
    (0.0..1e6).contains(&value).then_some(value)
}

fn grow_view_box(open: &str, extra: u32) -> String {
    let key = " viewBox=\"";
    let Some(at) = open.find(key) else {
        return open.to_string();
    };
    let start = at + key.len();
    let Some(len) = open[start..].find('"') else {
        return open.to_string();
    };
    let parts: Vec<f64> = open[start..start + len]
        .split([' ', ','])
        .filter(|p| !p.is_empty())
        .filter_map(|p| p.parse().ok())
        .collect();
    let [x, y, w, h] = parts[..] else {
        return open.to_string();
    };
    format!(
        "{}{x} {y} {w} {}{}",
        &open[..start],
        h + f64::from(extra),
        &open[start + len..]
    )
}

#[cfg(test)]
#[path = "export_tests.rs"]
mod tests;
