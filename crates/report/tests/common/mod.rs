//! Shared parts of the report golden tests: a fixed provenance (so nothing
//! needs redacting), rendering every format a report offers with its text
//! at 60, 80 and 120 columns (each checked to fit), and the check that no
//! Rust debug output reaches a reader.

#![allow(dead_code)] // each test file uses a different part of this module

pub mod debug_output;

use numasleuth_analyze::stats::Summary;
use numasleuth_report::export::{self, Exporter, Format};
use numasleuth_report::layout::{display_width, TextLayout};
use numasleuth_report::provenance::{utc, Provenance};

/// The terminal widths every text report is rendered and checked at.
pub const TERMINAL_WIDTHS: &[usize] = &[60, 80, 120];

/// 2026-11-23 17:30:05 UTC, on a made-up two-node host.
pub fn provenance() -> Provenance {
    let at_unix_s = 1_795_455_005;
    Provenance {
        numasleuth_version: "0.1.0".into(),
        generated_unix_s: at_unix_s,
        generated_utc: utc(at_unix_s),
        hostname: Some("db1".into()),
        kernel_release: Some("6.1.0-26-amd64".into()),
        source: "live",
        snapshot: None,
        run: None,
    }
}

/// A `{median, p10, p90, samples}` cell with a ±`spread` band.
pub fn summary(median: f64, spread: f64) -> Summary {
    Summary {
        median,
        p10: median - spread,
        p90: median + spread,
        samples: 15,
    }
}

/// Fails when a line of `text` is wider than `width`, unless the line is
/// one token that cannot be broken (a long path on its own line) or one
/// `code span` (a command to paste, never broken).
pub fn assert_fits(name: &str, text: &str, width: usize) {
    for line in text.lines() {
        assert!(
            display_width(line) <= width || unbreakable(line),
            "{name} at {width} columns: a line is {} wide:\n{line}\n\n{text}",
            display_width(line)
        );
    }
}

/// Snapshots `output` as `name@suffix`, after checking (for formats people
/// read) that it carries no Rust debug output.
pub fn check(name: &str, suffix: &str, output: &str, scan_for_debug: bool) {
    if scan_for_debug {
        if let Some(found) = debug_output::find(output) {
            panic!("{name} ({suffix}): Rust debug output reaches the user: {found}");
        }
    }
    let mut settings = insta::Settings::clone_current();
    settings.set_snapshot_suffix(suffix);
    settings.set_prepend_module_to_snapshot(false);
    settings.set_omit_expression(true);
    // Relative to this file: crates/report/tests/snapshots.
    settings.set_snapshot_path("../snapshots");
    settings.bind(|| insta::assert_snapshot!(name, output));
}

/// Every format `report` writes: text at each width, JSON once, and CSV,
/// HTML and SVG where it offers them. A format it lists but cannot render
/// fails the test.
pub fn golden_all<E: Exporter>(name: &str, report: &E) {
    let provenance = provenance();
    for format in export::formats::<E>() {
        if format == Format::Text {
            for &width in TERMINAL_WIDTHS {
                let text = render(report, format, &provenance, &TextLayout::new(width, false));
                assert_fits(name, &text, width);
                check(name, &width.to_string(), &text, true);
            }
            continue;
        }
        let mut out = render(report, format, &provenance, &TextLayout::default());
        if format == Format::Html || format == Format::Svg {
            // One element per line, so a change reads as a small diff.
            out = out.replace("><", ">\n<");
        }
        check(name, format.name(), &out, format != Format::Json);
    }
}

fn render<E: Exporter>(report: &E, format: Format, provenance: &Provenance, layout: &TextLayout) -> String {
    export::render(report, format, provenance, layout).unwrap_or_else(|e| panic!("{format}: {e}"))
}

/// One token, or one `code span` with its punctuation: what the text
/// layout never breaks.
fn unbreakable(line: &str) -> bool {
    let text = line.trim();
    let code = text
        .trim_start_matches('(')
        .trim_end_matches(|c: char| ".,;:)".contains(c));
    !text.contains(' ') || (code.starts_with('`') && code.ends_with('`') && code.matches('`').count() == 2)
}
