//! Human formatting of numbers for reports. `bytes` ("1.5 GiB") lives in
//! model so analyze's finding sentences use the same form.

pub use numasleuth_model::units::bytes;

pub fn optional_bytes(value: Option<u64>) -> String {
    value.map_or_else(|| "?".to_string(), bytes)
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
}
