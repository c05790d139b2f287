//! Human formatting of numbers for reports. `bytes` ("1.5 GiB") lives in
//! model so analyze's finding sentences use the same form.

pub use numasleuth_model::units::bytes;

pub fn optional_bytes(value: Option<u64>) -> String {
    value.map_or_else(|| "?".to_string(), bytes)
}

/// A span as a person says it: `100 ms`, `1.5 s`, `45 s`, `1 min`,
/// `2 min 30 s`, `1 h 15 min`; a part that is zero is left out.
pub fn duration(span: std::time::Duration) -> String {
    let ms = span.as_millis();
    if ms < 1000 {
        return format!("{ms} ms");
    }
    if ms < 60_000 && !ms.is_multiple_of(1000) {
        return format!("{:.1} s", span.as_secs_f64());
    }
    let secs = span.as_secs();
    let parts = [(secs / 3600, "h"), (secs / 60 % 60, "min"), (secs % 60, "s")];
    let words: Vec<String> = parts
        .iter()
        .filter(|(count, _)| *count > 0)
        .map(|(count, unit)| format!("{count} {unit}"))
        .collect();
    words.join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 36: memwatch said "for 60000 ms".
    #[test]
    fn human_durations() {
        let ms = std::time::Duration::from_millis;
        assert_eq!(duration(ms(100)), "100 ms");
        assert_eq!(duration(ms(1500)), "1.5 s");
        assert_eq!(duration(ms(45_000)), "45 s");
        assert_eq!(duration(ms(60_000)), "1 min");
        assert_eq!(duration(ms(150_000)), "2 min 30 s");
        assert_eq!(duration(ms(4_500_000)), "1 h 15 min");
        assert_eq!(duration(ms(7 * 24 * 3_600_000)), "168 h");
    }

    #[test]
    fn human_bytes() {
        assert_eq!(bytes(512), "512 B");
        assert_eq!(bytes(32 * 1024), "32 KiB");
        assert_eq!(bytes(1536 * 1024 * 1024), "1.5 GiB");
        assert_eq!(bytes(24630920 * 1024), "23.5 GiB");
    }
}
