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

/// Left-aligned columns, two spaces apart; the last column is not padded.
pub fn columns(rows: &[Vec<String>]) -> String {
    let width = rows.iter().map(Vec::len).max().unwrap_or(0);
    let widths: Vec<usize> = (0..width)
        .map(|c| {
            rows.iter()
                .filter_map(|r| r.get(c))
                .map(|s| s.chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut out = String::new();
    for row in rows {
        let mut line = String::new();
        for (c, cell) in row.iter().enumerate() {
            if c + 1 == row.len() {
                line.push_str(cell);
            } else {
                line.push_str(&format!("{cell:<w$}  ", w = widths[c]));
            }
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

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
