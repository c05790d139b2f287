//! Human formatting of numbers for reports. `bytes` ("1.5 GiB") lives in
//! model so analyze's finding sentences use the same form.

pub use numasleuth_model::units::bytes;

pub fn optional_bytes(value: Option<u64>) -> String {
    value.map_or_else(|| "?".to_string(), bytes)
}

/// The terminal width tables must fit, set by the binary (`$COLUMNS`, or
/// the terminal's own size); 0 (unset): tables are as wide as their cells.
/// Settable more than once so golden tests can render at 80 and 200
/// columns in one process (they serialise on it).
static TABLE_WIDTH: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// Narrower than this, a table is not squeezed further: it wraps instead.
const MIN_TABLE_WIDTH: usize = 40;

pub fn set_table_width(width: usize) {
    TABLE_WIDTH.store(width.max(MIN_TABLE_WIDTH), std::sync::atomic::Ordering::Relaxed);
}

/// Left-aligned columns, two spaces apart; the last column is not padded.
/// When a table width is set and the table is wider, the widest columns
/// are narrowed until it fits, down to a floor, and their cells wrap onto
/// more lines (at spaces where they can) so no value is lost; `--json`
/// always has every value on one line.
pub fn columns(rows: &[Vec<String>]) -> String {
    let limit = TABLE_WIDTH.load(std::sync::atomic::Ordering::Relaxed);
    columns_within(rows, (limit > 0).then_some(limit))
}

fn columns_within(rows: &[Vec<String>], limit: Option<usize>) -> String {
    let width = rows.iter().map(Vec::len).max().unwrap_or(0);
    let mut widths: Vec<usize> = (0..width)
        .map(|c| {
            rows.iter()
                .filter_map(|r| r.get(c))
                .map(|s| s.chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    if let Some(limit) = limit {
        // A column narrows only down to its longest word: values such as
        // `0000:11:01.0` or `31.1M` are never split, the table overflows
        // instead (the terminal wraps it) when words alone are too wide.
        let floors: Vec<usize> = (0..width)
            .map(|c| {
                rows.iter()
                    .filter_map(|r| r.get(c))
                    .flat_map(|s| s.split(' '))
                    .map(|w| w.chars().count())
                    .max()
                    .unwrap_or(0)
            })
            .collect();
        fit(&mut widths, &floors, limit);
    }
    let mut out = String::new();
    for row in rows {
        let cells: Vec<Vec<String>> = row.iter().enumerate().map(|(c, cell)| wrap(cell, widths[c])).collect();
        let height = cells.iter().map(Vec::len).max().unwrap_or(1);
        for line_index in 0..height {
            let mut line = String::new();
            for (c, cell_lines) in cells.iter().enumerate() {
                let part = cell_lines.get(line_index).map_or("", String::as_str);
                if c + 1 == row.len() {
                    line.push_str(part);
                } else {
                    line.push_str(&format!("{part:<w$}  ", w = widths[c]));
                }
            }
            out.push_str(line.trim_end());
            out.push('\n');
        }
    }
    out
}

/// Narrows the widest columns until the table (two spaces between
/// columns) fits `limit`, none below its floor.
fn fit(widths: &mut [usize], floors: &[usize], limit: usize) {
    let total = |w: &[usize]| w.iter().sum::<usize>() + 2 * w.len().saturating_sub(1);
    while total(widths) > limit {
        let narrowable = widths
            .iter()
            .enumerate()
            .filter(|(c, w)| **w > floors[*c])
            .max_by_key(|(_, w)| **w)
            .map(|(c, w)| (c, *w));
        let Some((widest, w)) = narrowable else {
            return;
        };
        let excess = total(widths) - limit;
        widths[widest] = w.saturating_sub(excess).max(floors[widest]);
    }
}

/// A cell as lines of at most `width` characters, broken at spaces; a word
/// longer than the column (only when called with a narrower width than
/// the column's floor) is split, so every character is kept.
fn wrap(cell: &str, width: usize) -> Vec<String> {
    if width == 0 || cell.chars().count() <= width {
        return vec![cell.to_string()];
    }
    let mut lines = Vec::new();
    let mut line = String::new();
    for word in cell.split(' ') {
        let mut word: Vec<char> = word.chars().collect();
        loop {
            let used = line.chars().count();
            let gap = usize::from(used > 0);
            if used + gap + word.len() <= width {
                if gap == 1 {
                    line.push(' ');
                }
                line.extend(word.iter());
                break;
            }
            if used > 0 {
                lines.push(std::mem::take(&mut line));
                continue;
            }
            let rest = word.split_off(width);
            lines.push(word.iter().collect());
            word = rest;
        }
    }
    if !line.is_empty() {
        lines.push(line);
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_table_wider_than_the_terminal_wraps_its_widest_column() {
        let rows = vec![
            vec![
                "id".to_string(),
                "a long description of the row".to_string(),
                "x".to_string(),
            ],
            vec!["1".to_string(), "short".to_string(), "y".to_string()],
        ];
        let text = columns_within(&rows, Some(24));
        assert!(text.lines().all(|l| l.chars().count() <= 24), "{text}");
        assert_eq!(
            text,
            "id  a long             x\n    description of\n    the row\n1   short              y\n"
        );
        // Every word is still there.
        let mut words: Vec<&str> = text.split_whitespace().collect();
        words.sort_unstable();
        assert_eq!(
            words,
            [
                "1",
                "a",
                "description",
                "id",
                "long",
                "of",
                "row",
                "short",
                "the",
                "x",
                "y"
            ]
        );
        // Unlimited, every row is one line.
        assert_eq!(columns_within(&rows, None).lines().count(), 2);
        // Never below a column's longest word, however narrow: the table
        // overflows rather than split a value.
        let narrow = columns_within(&rows, Some(5));
        assert!(
            narrow.starts_with("id  a long       x\n    description\n    of the row\n"),
            "{narrow}"
        );
    }

    #[test]
    fn wrapping_keeps_every_character() {
        for cell in [
            "31.1M (30.2M–32.0M)",
            "0000:00:1f.6",
            "",
            "a  b",
            "x".repeat(30).as_str(),
        ] {
            for width in 1..12 {
                let joined: String = wrap(cell, width).concat();
                let without_spaces = |s: &str| s.chars().filter(|c| *c != ' ').collect::<String>();
                assert_eq!(without_spaces(&joined), without_spaces(cell), "{cell:?} at {width}");
                assert!(wrap(cell, width)
                    .iter()
                    .all(|l| l.chars().count() <= width.max(cell.chars().count().min(width))));
            }
        }
    }

    #[test]
    fn human_bytes() {
        assert_eq!(bytes(512), "512 B");
        assert_eq!(bytes(32 * 1024), "32 KiB");
        assert_eq!(bytes(1536 * 1024 * 1024), "1.5 GiB");
        assert_eq!(bytes(24630920 * 1024), "23.5 GiB");
    }

    #[test]
    fn aligned_columns() {
        let rows = vec![
            vec!["a".into(), "bbb".into(), "c".into()],
            vec!["dddd".into(), "e".into(), "f".into()],
        ];
        assert_eq!(columns(&rows), "a     bbb  c\ndddd  e    f\n");
    }
}
