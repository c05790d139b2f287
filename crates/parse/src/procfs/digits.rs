//! Numbers read straight from the bytes of a /proc line, for the parsers
//! that run once per mapping (`maps`, `numa_maps`: 50,000 lines or more per
//! `inspect`). They take only the plain spelling the kernel writes: digits,
//! no sign, no overflow. Anything else is `None`, and the caller then hands
//! the line to the `&str` parser, whose answer (a value or an error) is the
//! one that counts; so these never need to say why.

/// Each byte's value as a hex digit, or `NOT_HEX`: one load per digit
/// where a range match costs three compares.
const NOT_HEX: u8 = 0xff;
static HEX_VALUE: [u8; 256] = {
    let mut table = [NOT_HEX; 256];
    let mut i = 0;
    while i < 10 {
        table[b'0' as usize + i] = i as u8;
        i += 1;
    }
    let mut i = 0;
    while i < 6 {
        table[b'a' as usize + i] = 10 + i as u8;
        table[b'A' as usize + i] = 10 + i as u8;
        i += 1;
    }
    table
};

/// Lower- or upper-case hex digits, 1 to `max_digits` of them (16 fit a
/// `u64`, 8 a `u32`, without overflow).
pub(crate) fn hex(bytes: &[u8], max_digits: usize) -> Option<u64> {
    if bytes.is_empty() || bytes.len() > max_digits {
        return None;
    }
    let mut value = 0u64;
    for &b in bytes {
        let digit = HEX_VALUE[usize::from(b)];
        if digit == NOT_HEX {
            return None;
        }
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

/// A line read left to right, once.
pub(crate) struct Cursor<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Cursor<'a> {
    pub(crate) fn new(bytes: &'a [u8]) -> Self {
        Cursor { bytes, at: 0 }
    }

    /// Steps over spaces (only spaces: the separator of maps' fields).
    #[inline]
    pub(crate) fn skip_spaces(&mut self) {
        while self.bytes.get(self.at) == Some(&b' ') {
            self.at += 1;
        }
    }

    /// The bytes up to `end` (not included, and stepped over), or up to the
    /// end of the line when `end` is absent and `to_end_ok`.
    #[inline]
    pub(crate) fn until(&mut self, end: u8, to_end_ok: bool) -> Option<&'a [u8]> {
        let rest = &self.bytes[self.at..];
        match rest.iter().position(|&b| b == end) {
            Some(length) => {
                self.at += length + 1;
                Some(&rest[..length])
            }
            None if to_end_ok => {
                self.at = self.bytes.len();
                Some(rest)
            }
            None => None,
        }
    }

    /// Hex digits up to `end` (stepped over): `None` if any other byte
    /// comes first, or the digits are not 1 to `max_digits`.
    #[inline]
    pub(crate) fn hex_until(&mut self, end: u8, max_digits: usize) -> Option<u64> {
        let mut value = 0u64;
        let begin = self.at;
        loop {
            let b = *self.bytes.get(self.at)?;
            self.at += 1;
            if b == end {
                break;
            }
            let digit = HEX_VALUE[usize::from(b)];
            if digit == NOT_HEX {
                return None;
            }
            value = (value << 4) | u64::from(digit);
        }
        let digits = self.at - begin - 1;
        (1..=max_digits).contains(&digits).then_some(value)
    }

    /// What is left of the line.
    #[inline]
    pub(crate) fn rest(&self) -> &'a [u8] {
        &self.bytes[self.at..]
    }
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

    #[test]
    fn a_cursor_reads_fields_in_order() {
        let mut cursor = Cursor::new(b"1f-2a  rw-p x");
        assert_eq!(cursor.hex_until(b'-', 16), Some(0x1f));
        assert_eq!(cursor.hex_until(b' ', 16), Some(0x2a));
        cursor.skip_spaces();
        assert_eq!(cursor.until(b' ', false), Some(&b"rw-p"[..]));
        assert_eq!(cursor.until(b' ', false), None);
        assert_eq!(cursor.until(b' ', true), Some(&b"x"[..]));
        assert_eq!(Cursor::new(b"-1").hex_until(b'-', 16), None, "no digits");
        assert_eq!(Cursor::new(b"1g-").hex_until(b'-', 16), None);
        assert_eq!(Cursor::new(b"12").hex_until(b'-', 16), None, "no end");
        assert_eq!(Cursor::new(b"123-").hex_until(b'-', 2), None, "too many digits");
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
            let mut cursor = Cursor::new(text.as_bytes());
            if let Some(value) = cursor.hex_until(b' ', 16) {
                let word = text.split(' ').next().unwrap_or("");
                prop_assert_eq!(Some(value), u64::from_str_radix(word, 16).ok());
            }
        }
    }
}
