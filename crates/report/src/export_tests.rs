use serde::Serialize;

use super::*;
use crate::provenance::{utc, Provenance};

fn provenance() -> Provenance {
    Provenance {
        numasleuth_version: "0.1.0".into(),
        generated_unix_s: 0,
        generated_utc: utc(0),
        hostname: Some("db<1>".into()),
        kernel_release: Some("6.1.0".into()),
        source: "live",
        snapshot: None,
        run: None,
    }
}

#[derive(Serialize)]
struct Doc {
    schema: &'static str,
    value_ns: u64,
}

struct Plain(Doc);

impl Exporter for Plain {
    fn json(&self, provenance: &Provenance) -> serde_json::Result<String> {
        with_provenance(&self.0, provenance)
    }
    fn text(&self, layout: &TextLayout) -> String {
        format!(
            "value {} ns{} and then a sentence long enough to need wrapping at forty columns\n",
            self.0.value_ns,
            if layout.colour { " (colour)" } else { "" }
        )
    }
}

struct Charted(Doc);

impl Exporter for Charted {
    const EXTRA: &'static [Format] = &[Format::Csv, Format::Svg];
    fn json(&self, provenance: &Provenance) -> serde_json::Result<String> {
        with_provenance(&self.0, provenance)
    }
    fn text(&self, _layout: &TextLayout) -> String {
        String::new()
    }
    fn csv(&self) -> Option<String> {
        Some(format!("value_ns\n{}\n", self.0.value_ns))
    }
    fn svg(&self) -> Option<Result<String, ChartError>> {
        Some(Ok(
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"100\" height=\"50\"><rect/></svg>\n".into(),
        ))
    }
}

fn doc() -> Doc {
    Doc {
        schema: "numasleuth.test/1",
        value_ns: 42,
    }
}

#[test]
fn extensions_map_to_formats_and_back() {
    for format in ALL {
        assert_eq!(Format::from_extension(format.extension()), Some(format));
    }
    assert_eq!(Format::from_extension("JSON"), Some(Format::Json));
    assert_eq!(Format::from_extension("htm"), Some(Format::Html));
    assert_eq!(Format::from_extension("pdf"), None);
    assert_eq!(Format::from_extension(""), None);
}

#[test]
fn text_starts_with_the_provenance_line_passes_colour_and_is_wrapped() {
    let wide = TextLayout::new(200, true);
    let out = render(&Plain(doc()), Format::Text, &provenance(), &wide).unwrap();
    let mut lines = out.lines();
    assert_eq!(lines.next().unwrap(), provenance().line());
    assert!(lines.next().unwrap().starts_with("value 42 ns (colour) and"));
    let narrow = TextLayout::new(40, false);
    let out = render(&Plain(doc()), Format::Text, &provenance(), &narrow).unwrap();
    assert!(out.lines().all(|l| l.chars().count() <= 40), "{out}");
    assert!(out.lines().count() > 3, "{out}");
}

#[test]
fn json_keeps_the_document_and_adds_provenance_last() {
    let out = render(&Plain(doc()), Format::Json, &provenance(), &TextLayout::default()).unwrap();
    assert!(out.ends_with("}\n"));
    let value: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(value["schema"], "numasleuth.test/1");
    assert_eq!(value["value_ns"], 42);
    assert_eq!(value["provenance"]["hostname"], "db<1>");
    assert_eq!(value["provenance"]["source"], "live");
    // The document's own fields come first, as before.
    assert!(out.find("\"schema\"").unwrap() < out.find("\"provenance\"").unwrap());
}

#[test]
fn a_format_the_report_lacks_is_an_error_naming_what_it_has() {
    let err = render(&Plain(doc()), Format::Csv, &provenance(), &TextLayout::default()).unwrap_err();
    assert_eq!(
        err.to_string(),
        "no csv output here; this report writes text (.txt), json (.json)"
    );
    assert_eq!(
        formats::<Charted>(),
        vec![Format::Text, Format::Json, Format::Csv, Format::Svg]
    );
    assert!(render(&Charted(doc()), Format::Html, &provenance(), &TextLayout::default()).is_err());
}

#[test]
fn csv_has_no_provenance_because_a_reader_would_take_it_for_data() {
    let out = render(&Charted(doc()), Format::Csv, &provenance(), &TextLayout::default()).unwrap();
    assert_eq!(out, "value_ns\n42\n");
}

#[test]
fn svg_gets_a_desc_and_a_footer_in_grown_room() {
    let out = render(&Charted(doc()), Format::Svg, &provenance(), &TextLayout::default()).unwrap();
    assert!(out.starts_with("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"100\" height=\"68\">"));
    let escaped = crate::html::escape(&provenance().line());
    assert!(escaped.contains("db&lt;1&gt;"));
    assert!(out.contains(&format!("<desc>{escaped}</desc>")));
    // The line is longer than the 100 px chart: squeezed to its width.
    assert!(out.contains(&format!(
        "y=\"63\" font-size=\"10\" fill=\"#555\" font-family=\"sans-serif\" textLength=\"92\" \
         lengthAdjust=\"spacingAndGlyphs\">{escaped}</text></svg>"
    )));
    assert!(out.contains("<rect/>"));
}

#[test]
fn svg_view_box_grows_with_the_height() {
    let svg = "<?xml version=\"1.0\"?>\n<svg width=\"10\" height=\"20\" viewBox=\"0 0 10 20\" xmlns=\"x\">a</svg>";
    let out = svg_with_provenance(svg, &provenance());
    assert!(out.starts_with("<?xml version=\"1.0\"?>\n<svg width=\"10\" height=\"38\" viewBox=\"0 0 10 38\""));
    assert!(out.ends_with("</text></svg>"));
}

#[test]
fn svg_without_a_height_still_gets_its_desc() {
    let out = svg_with_provenance("<svg><g/></svg>", &provenance());
    assert!(out.starts_with("<svg><desc>"));
    assert!(out.ends_with("<g/></svg>"));
    // Not an SVG at all: left alone rather than mangled.
    assert_eq!(svg_with_provenance("plain", &provenance()), "plain");
}

#[test]
fn json_lines_carry_provenance_in_the_first_record_only() {
    let report = crate::memwatch_text::MemwatchReport {
        text: "t=0.1s\n".into(),
        records: vec![
            serde_json::json!({"type": "sample", "t_s": 0.1}),
            serde_json::json!({"type": "summary"}),
        ],
        history: Vec::new(),
    };
    let out = render(&report, Format::Json, &provenance(), &TextLayout::default()).unwrap();
    let lines: Vec<serde_json::Value> = out.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(lines.len(), 2);
    assert_eq!(lines[0]["provenance"]["hostname"], "db<1>");
    assert_eq!(lines[0]["t_s"], 0.1);
    assert!(lines[1].get("provenance").is_none());
    let text = render(&report, Format::Text, &provenance(), &TextLayout::default()).unwrap();
    assert_eq!(text, format!("{}\nt=0.1s\n", provenance().line()));
    assert!(render(&report, Format::Csv, &provenance(), &TextLayout::default()).is_err());
}
