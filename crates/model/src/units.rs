//! Amounts as people read them: "1.5 GiB", not 1610612736 or "1572864 KiB".
//! Shared by analyze (finding sentences) and report (tables).

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

#[cfg(test)]
mod tests {
    use super::bytes;

    #[test]
    fn binary_units_with_one_decimal() {
        assert_eq!(bytes(0), "0 B");
        assert_eq!(bytes(1023), "1023 B");
        assert_eq!(bytes(800_000 * 1024), "781 MiB");
        assert_eq!(bytes(1536 * 1024), "1.5 MiB");
        assert_eq!(bytes(64 << 30), "64 GiB");
        assert_eq!(bytes(u64::MAX), "16384 PiB");
    }
}
