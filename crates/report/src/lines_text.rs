//! `lines` for people: each shared cache line with its symbols, one per
//! row, so the hot global and its innocent neighbour sit side by side.

use numasleuth_analyze::lines::{Line, LineSymbol};

use crate::layout::TextLayout;
use crate::table::{table, Col};

pub fn render(heading: &str, lines: &[Line], target: Option<&LineSymbol>, layout: &TextLayout) -> String {
    let mut out = format!("{heading}\n");
    if lines.is_empty() {
        out.push_str("no cache line holds more than one data symbol\n");
    }
    for line in lines {
        let holds = target.is_some_and(|t| line.symbols.iter().any(|s| s.address == t.address && s.name == t.name));
        out.push_str(&format!(
            "\nline {:#x}: {} symbol(s){}\n",
            line.address,
            line.symbols.len(),
            if holds { "  <- holds the symbol asked for" } else { "" }
        ));
        let rows: Vec<Vec<String>> = line
            .symbols
            .iter()
            .map(|s| {
                let mut name = s.name.clone();
                if !s.aliases.is_empty() {
                    name.push_str(&format!(" (also {})", s.aliases.join(", ")));
                }
                vec![
                    format!("{:#x}", s.address),
                    format!("{} B", s.size),
                    s.section.clone(),
                    name,
                ]
            })
            .collect();
        let kinds = [Col::Wrap, Col::Wrap, Col::Name, Col::Name];
        for row in table(&rows, &kinds, &layout.indented(4)).lines() {
            out.push_str(&format!("    {row}\n"));
        }
    }
    out
}
