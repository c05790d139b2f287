//! `pmu diff` for people: the ranked table (largest change first, either
//! way), then what could not be ranked and why.

use numasleuth_analyze::pmu::diff::{DiffRow, PmuDiff, Side};

use crate::layout::TextLayout;
use crate::pmu_text::grouped;
use crate::table::{table, Col};

/// Rows shown before the rest are only counted (all are in the JSON).
const TOP_ROWS: usize = 40;

fn ratio(row: &DiffRow) -> String {
    match (row.zero_in, row.ratio) {
        (Some(Side::A), _) => "only in B > 0".into(),
        (Some(Side::B), _) => "only in A > 0".into(),
        (None, Some(r)) if r >= 1.0 => format!("{r:.3}× more in B"),
        (None, Some(r)) => format!("{:.3}× less in B", 1.0 / r),
        (None, None) => "-".into(),
    }
}

fn list(out: &mut String, title: &str, names: &[String]) {
    if !names.is_empty() {
        out.push_str(&format!("{title} ({}): {}\n", names.len(), names.join(", ")));
    }
}

/// `a` and `b` are how the two files are named in the headline.
pub fn render(d: &PmuDiff, a: &str, b: &str, layout: &TextLayout) -> String {
    let unit = match d.per.as_str() {
        "second" => "per second".to_string(),
        "op" => "per op".to_string(),
        event => format!("per {event}"),
    };
    let mut out = format!("pmu diff: A = {a}, B = {b}; {unit}, largest change first (|ln B/A|)\n\n");
    if d.rows.is_empty() {
        out.push_str("no event was counted in both runs often enough to compare\n");
    } else {
        let mut rows = vec![vec![
            "rank".to_string(),
            "event".to_string(),
            format!("A {unit}"),
            format!("B {unit}"),
            "B/A".to_string(),
        ]];
        for (i, r) in d.rows.iter().take(TOP_ROWS).enumerate() {
            rows.push(vec![
                (i + 1).to_string(),
                r.name.clone(),
                grouped(r.a),
                grouped(r.b),
                ratio(r),
            ]);
        }
        out.push_str(&table(&rows, &[Col::Wrap, Col::Name], layout));
        if d.rows.len() > TOP_ROWS {
            out.push_str(&format!("… and {} more (all in --json)\n", d.rows.len() - TOP_ROWS));
        }
    }
    out.push('\n');
    list(&mut out, "only in A", &d.only_in_a);
    list(&mut out, "only in B", &d.only_in_b);
    list(
        &mut out,
        &format!("too few to rank (under {} in both)", grouped(d.min_count)),
        &d.too_few,
    );
    list(&mut out, "zero in both", &d.both_zero);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(name: &str, a: f64, b: f64, zero_in: Option<Side>) -> DiffRow {
        DiffRow {
            name: name.into(),
            pmu: "software".into(),
            a,
            b,
            ratio: (a > 0.0).then(|| b / a),
            log_ratio: (a > 0.0 && b > 0.0).then(|| (b / a).ln()),
            zero_in,
        }
    }

    #[test]
    fn ranked_rows_then_what_was_set_apart() {
        let d = PmuDiff {
            per: "second".into(),
            min_count: 100.0,
            rows: vec![
                row("major-faults", 0.0, 500.0, Some(Side::A)),
                row("page-faults", 1000.0, 30_000.0, None),
                row("context-switches", 800.0, 200.0, None),
            ],
            only_in_a: vec!["cycles".into()],
            only_in_b: vec![],
            both_zero: vec!["alignment-faults".into()],
            too_few: vec!["cpu-migrations".into()],
        };
        let text = render(&d, "good.json", "bad.json", &TextLayout::new(200, false));
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(
            lines[0],
            "pmu diff: A = good.json, B = bad.json; per second, largest change first (|ln B/A|)"
        );
        assert!(lines[2].starts_with("rank  event"), "{text}");
        assert!(
            lines[3].starts_with("1     major-faults") && lines[3].ends_with("only in B > 0"),
            "{text}"
        );
        assert!(
            lines[4].contains("page-faults") && lines[4].ends_with("30.000× more in B"),
            "{text}"
        );
        assert!(lines[5].ends_with("4.000× less in B"), "{text}");
        assert!(text.contains("\nonly in A (1): cycles\n"), "{text}");
        assert!(
            text.contains("too few to rank (under 100 in both) (1): cpu-migrations\n"),
            "{text}"
        );
        assert!(text.ends_with("zero in both (1): alignment-faults\n"), "{text}");
    }
}
