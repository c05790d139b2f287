//! Issue 36: doctor's "guards against" line quoted figures with no source.
//! Each incident names docs/incidents.md, which quotes the design notes'
//! incidents, and every figure it quotes is on that page.

use std::path::Path;

use numasleuth_analyze::findings::incident;

fn page() -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/incidents.md");
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The figures of a sentence: its words that hold a digit, without the
/// punctuation around them (`6,520`, `10–40`, `30%`).
fn figures(text: &str) -> Vec<String> {
    text.split_whitespace()
        .filter(|w| w.chars().any(|c| c.is_ascii_digit()))
        .map(|w| w.trim_matches(|c: char| !c.is_ascii_digit()).to_string())
        .collect()
}

#[test]
fn every_incident_cites_the_page_and_quotes_only_its_figures() {
    let page = page();
    for text in incident::ALL {
        assert!(text.contains("(docs/incidents.md)"), "no source: {text}");
        let quoted = figures(text);
        for figure in quoted {
            assert!(
                page.contains(&figure),
                "{figure} of {text:?} is not in docs/incidents.md"
            );
        }
    }
}
