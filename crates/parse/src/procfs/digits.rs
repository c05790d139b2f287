//! Numbers read straight from the bytes of a /proc line, for the parsers
//! that run once per mapping (`maps`, `numa_maps`: 50,000 lines or more per
//! `inspect`). They take only the plain spelling the kernel writes: digits,
//! no sign, no overflow. Anything else is `None`, and the caller then hands
//! the line to the `&str` parser, whose answer (a value or an error) is the
//! one that counts; so these never need to say why.

/// Lower- or upper-case hex digits, 1 to `max_digits` of them (16 fit a
/// `u64`, 8 a `u32`, without overflow).
pub(crate) fn hex(bytes: &[u8], max_digits: usize) -> Option<u64> {
    if bytes.is_empty() || bytes.len() > max_digits {
        return None;
    }
    let mut value = 0u64;
    for &b in bytes {
        let digit = match b {
            b'0'..=b'9' => b - b'0',
            b'a'..=b'f' => b - b'a' + 10,
            b'A'..=b'F' => b - b'A' + 10,
            _ => return None,
        };
        value = (value << 4) | u64::from(digit);
    }
    Some(value)
}

/// Decimal digits, at least one, that fit a `u64`.
pub(crate) fn decimal(bytes: &[u8]) -> Option<u64> {
    if bytes.is_empty() {
        return None;
    }
    let mut value = 0u64;
    for &b in bytes {
        if !b.is_ascii_digit() {
            return None;
        }
        value = value.checked_mul(10)?.checked_add(u64::from(b - b'0'))?;
    }
    Some(value)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn plain_spellings_only() {
        assert_eq!(hex(b"7fFf", 16), Some(0x7fff));
        assert_eq!(hex(b"ffffffffffffffff", 16), Some(u64::MAX));
        assert_eq!(hex(b"1ffffffff", 8), None);
        assert_eq!(hex(b"+1", 16), None);
        assert_eq!(hex(b"", 16), None);
        assert_eq!(decimal(b"18446744073709551615"), Some(u64::MAX));
        assert_eq!(decimal(b"18446744073709551616"), None);
        assert_eq!(decimal(b"+5"), None);
        assert_eq!(decimal(b"1 "), None);
    }

    proptest! {
        /// Where they answer, they agree with the standard library.
        #[test]
        fn agree_with_std(text in "[+0-9a-fA-F ]{0,21}") {
            if let Some(value) = hex(text.as_bytes(), 16) {
                prop_assert_eq!(Some(value), u64::from_str_radix(&text, 16).ok());
            }
            if let Some(value) = decimal(text.as_bytes()) {
                prop_assert_eq!(Some(value), text.parse::<u64>().ok());
            }
        }
    }
}
