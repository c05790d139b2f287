//! Human formatting of numbers; only the report layer turns bytes into
//! "1.5 GiB".

pub fn bytes(value: u64) -> String {
    const UNITS: [&str; 6] = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"];
    let mut scaled = value as f64;
    let mut unit = 0;
    while scaled >= 1024.0 && unit + 1 < UNITS.len() {
        scaled /= 1024.0;
        unit += 1;
    }
    if unit == 0 || scaled >= 100.0 {
        return format!("{scaled:.0} {}", UNITS[unit]);
    }
    // One decimal, but "64 GiB" rather than "64.0 GiB" when it rounds even.
    let text = format!("{scaled:.1}");
    format!("{} {}", text.strip_suffix(".0").unwrap_or(&text), UNITS[unit])
}

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
/// A squeezed column keeps at least this many characters.
const MIN_COLUMN_WIDTH: usize = 8;

pub fn set_table_width(width: usize) {
    TABLE_WIDTH.store(width.max(MIN_TABLE_WIDTH), std::sync::atomic::Ordering::Relaxed);
}

/// Left-aligned columns, two spaces apart; the last column is not padded.
/// When a table width is set and the table is wider, the widest column is
/// cut (its cells end in `…`) until it fits, down to a floor; `--json`
/// always has every value whole.
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
        fit(&mut widths, limit);
    }
    let mut out = String::new();
    for row in rows {
        let mut line = String::new();
        for (c, cell) in row.iter().enumerate() {
            let cell = cut(cell, widths[c]);
            if c + 1 == row.len() {
                line.push_str(&cell);
            } else {
                line.push_str(&format!("{cell:<w$}  ", w = widths[c]));
            }
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

/// Narrows the widest columns until the table (two spaces between
/// columns) fits `limit`, none below [`MIN_COLUMN_WIDTH`].
fn fit(widths: &mut [usize], limit: usize) {
    let total = |w: &[usize]| w.iter().sum::<usize>() + 2 * w.len().saturating_sub(1);
    while total(widths) > limit {
        let Some((widest, &w)) = widths.iter().enumerate().max_by_key(|(_, w)| **w) else {
            return;
        };
        if w <= MIN_COLUMN_WIDTH {
            return;
        }
        let excess = total(widths) - limit;
        widths[widest] = w.saturating_sub(excess).max(MIN_COLUMN_WIDTH);
    }
}

fn cut(cell: &str, width: usize) -> String {
    if cell.chars().count() <= width {
        return cell.to_string();
    }
    let kept: String = cell.chars().take(width.saturating_sub(1)).collect();
    format!("{kept}…")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_table_wider_than_the_terminal_cuts_its_widest_column() {
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
        assert!(text.contains('…'), "{text}");
        // Unlimited, nothing is cut.
        assert!(!columns_within(&rows, None).contains('…'));
        // Never below the floor, however narrow.
        let narrow = columns_within(&rows, Some(5));
        assert!(narrow.lines().next().unwrap().contains("a long …"), "{narrow}");
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
