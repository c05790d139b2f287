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
    let mut words = bytes.chunks_exact(8);
    for word in &mut words {
        let (count, digits) = swar::leading_hex(u64::from_le_bytes(*word.first_chunk::<8>()?));
        if count < 8 {
            return None;
        }
        value = (value << 32) | digits;
    }
    let tail = words.remainder();
    if tail.is_empty() {
        return Some(value);
    }
    // Leading zeros pad the tail to eight digits without changing its value.
    let mut padded = [b'0'; 8];
    padded[8 - tail.len()..].copy_from_slice(tail);
    let (count, digits) = swar::leading_hex(u64::from_le_bytes(padded));
    (count == 8).then_some((value << (4 * tail.len())) | digits)
}

/// The byte-at-a-time [`hex`], which the eight-at-a-time one must equal.
#[cfg(test)]
pub(crate) fn hex_bytewise(bytes: &[u8], max_digits: usize) -> Option<u64> {
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

/// Eight hex digits in one `u64` (SWAR: SIMD within a register), for
/// [`hex`] and [`Cursor::hex_until`]: a word of up to eight digits costs
/// about 45 instructions, where the table loop costs about 11 a digit
/// (callgrind, bench/RESULTS.md, 12:24 UTC section).
mod swar {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const TOP_BITS: u64 = 0x8080_8080_8080_8080;
    const LOW_7_BITS: u64 = 0x7f7f_7f7f_7f7f_7f7f;

    /// The top bit of each byte of `x` (every byte below 0x80) that lies in
    /// `lo..=hi`: adding `0x80 - lo` sets it from `lo` up, adding
    /// `0x7f - hi` from `hi + 1` up, and neither carries into the next byte.
    #[inline(always)]
    fn in_range(x: u64, lo: u8, hi: u8) -> u64 {
        let at_least_lo = x + ONES * u64::from(0x80 - lo);
        let above_hi = x + ONES * u64::from(0x7f - hi);
        at_least_lo & !above_hi & TOP_BITS
    }

    /// Of eight bytes loaded little-endian (the first byte lowest), how many
    /// lead as hex digits, and their value read most significant first.
    #[inline(always)]
    pub(super) fn leading_hex(word: u64) -> (usize, u64) {
        let low = word & LOW_7_BITS;
        let digit = in_range(low, b'0', b'9');
        // Setting bit 5 makes `A`-`F` into `a`-`f` and no digit a letter.
        let letter = in_range(low | (ONES * 0x20), b'a', b'f');
        // A byte from 0x80 up is no digit whatever its low bits say.
        let valid = (digit | letter) & !word;
        let count = ((!valid & TOP_BITS).trailing_zeros() / 8) as usize;
        if count == 0 {
            return (0, 0);
        }
        // A digit's value is its low nibble, a letter's that plus 9.
        let nibbles = (low & (ONES * 0x0f)) + (letter >> 7) * 9;
        // The leading digits to the top, zeros before them, the rest out.
        let nibbles = nibbles << (8 * (8 - count));
        // Neighbours joined, the earlier (more significant) one shifted up:
        // bytes into pairs, pairs into fours, fours into the eight.
        let pairs = ((nibbles << 4) | (nibbles >> 8)) & 0x00ff_00ff_00ff_00ff;
        let fours = ((pairs << 8) | (pairs >> 16)) & 0x0000_ffff_0000_ffff;
        let eight = ((fours << 16) | (fours >> 32)) & 0xffff_ffff;
        (count, eight)
    }
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
    /// comes first, or the digits are not 1 to `max_digits`. Eight bytes at
    /// a time while eight are left (a maps line has about 40 hex digits),
    /// then one at a time; the answer is the byte loop's either way.
    /// Always inlined: six calls a mapping, and a call's register saves cost
    /// as much as a word of digits.
    #[inline(always)]
    pub(crate) fn hex_until(&mut self, end: u8, max_digits: usize) -> Option<u64> {
        // A hex `end` stops the byte loop before a byte the word would read
        // as a digit; no caller has one.
        if HEX_VALUE[usize::from(end)] != NOT_HEX {
            return self.hex_until_bytewise(end, max_digits);
        }
        let begin = self.at;
        let mut value = 0u64;
        let stop = loop {
            if let Some(word) = self.bytes.get(self.at..).and_then(<[u8]>::first_chunk::<8>) {
                let (count, digits) = swar::leading_hex(u64::from_le_bytes(*word));
                // `count` is at most 8, so the shift stays below 64 and
                // drops the bits the byte loop's shifts would drop.
                value = (value << (4 * count)) | digits;
                self.at += count;
                match word.get(count) {
                    Some(&stop) => break stop,
                    None => continue,
                }
            }
            let b = *self.bytes.get(self.at)?;
            let digit = HEX_VALUE[usize::from(b)];
            if digit == NOT_HEX {
                break b;
            }
            value = (value << 4) | u64::from(digit);
            self.at += 1;
        };
        self.at += 1;
        let digits = self.at - begin - 1;
        (stop == end && (1..=max_digits).contains(&digits)).then_some(value)
    }

    /// [`Self::hex_until`] a byte at a time: for a hex `end`, and the
    /// reference the tests hold the other to.
    pub(crate) fn hex_until_bytewise(&mut self, end: u8, max_digits: usize) -> Option<u64> {
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

    #[test]
    fn eight_at_a_time_reads_each_digit_and_stops_at_the_first_other_byte() {
        let word = |bytes: &[u8; 8]| swar::leading_hex(u64::from_le_bytes(*bytes));
        assert_eq!(word(b"0123abcd"), (8, 0x0123_abcd));
        assert_eq!(word(b"89ABCDEF"), (8, 0x89ab_cdef));
        assert_eq!(word(b"fF-00000"), (2, 0xff));
        assert_eq!(word(b"-1234567"), (0, 0));
        // Neighbours of every range edge, and a byte past ASCII whose low
        // seven bits are a digit ('1' + 0x80).
        for edge in [b'/', b':', b'@', b'G', b'`', b'g', 0xb1] {
            assert_eq!(
                word(&[b'7', edge, b'1', b'1', b'1', b'1', b'1', b'1']),
                (1, 7),
                "{edge:#x}"
            );
        }
        assert_eq!(hex(b"123456789abcdef0", 16), Some(0x1234_5678_9abc_def0));
        assert_eq!(hex(b"123456789", 16), Some(0x1_2345_6789));
        assert_eq!(hex(b"12345678\xb1", 16), None);
        let mut cursor = Cursor::new(b"00007fffb2a1c000-00007fffb2a1e000 ");
        assert_eq!(cursor.hex_until(b'-', 16), Some(0x7fff_b2a1_c000));
        assert_eq!(cursor.hex_until(b' ', 16), Some(0x7fff_b2a1_e000));
        assert_eq!(cursor.rest(), b"");
        assert_eq!(
            Cursor::new(b"123456789abcdef01 ").hex_until(b' ', 16),
            None,
            "17 digits"
        );
        assert_eq!(Cursor::new(b"12345678g ").hex_until(b' ', 16), None);
        // Every byte at every position of fields up to 20 digits long.
        let digits = b"0123456789abcdefABCD";
        for length in 1..=digits.len() {
            for at in 0..length {
                for bad in 0..=u8::MAX {
                    let mut field = digits[..length].to_vec();
                    field[at] = bad;
                    assert_eq!(hex(&field, 16), hex_bytewise(&field, 16), "{field:?}");
                    field.push(b' ');
                    assert_eq!(both(&field, b' ', 16)[0], both(&field, b' ', 16)[1], "{field:?}");
                }
            }
        }
    }

    /// Bytes near a hex field: digits of both cases, the ends callers use,
    /// and their neighbours in the ranges the words test.
    fn near_hex() -> impl Strategy<Value = Vec<u8>> {
        let byte = prop_oneof![
            8 => prop::sample::select(b"0123456789abcdefABCDEF".to_vec()),
            1 => prop::sample::select(b"-: /:@G`g\xb0\xb9\xc1".to_vec()),
            1 => any::<u8>(),
        ];
        prop::collection::vec(byte, 0..40)
    }

    /// What the byte loop answers, and where it leaves the cursor after a
    /// value (after `None` the callers stop reading the line).
    fn both(bytes: &[u8], end: u8, max_digits: usize) -> [(Option<u64>, usize); 2] {
        let mut words = Cursor::new(bytes);
        let mut single = Cursor::new(bytes);
        let answers = [
            words.hex_until(end, max_digits),
            single.hex_until_bytewise(end, max_digits),
        ];
        let at = |answer: Option<u64>, cursor: &Cursor| if answer.is_some() { cursor.at } else { 0 };
        [
            (answers[0], at(answers[0], &words)),
            (answers[1], at(answers[1], &single)),
        ]
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

        /// Eight at a time answers as one at a time, on any bytes: every
        /// field length, a bad byte anywhere, more than 16 digits, a line
        /// ending inside the field, and any `end` (a hex one included).
        #[test]
        fn words_agree_with_the_byte_loop(
            bytes in near_hex(),
            end in prop_oneof![prop::sample::select(b"-: ".to_vec()), any::<u8>()],
            max_digits in prop::sample::select(vec![1usize, 7, 8, 9, 15, 16, 17, 64]),
        ) {
            let [words, single] = both(&bytes, end, max_digits);
            prop_assert_eq!(words, single);
            prop_assert_eq!(hex(&bytes, max_digits), hex_bytewise(&bytes, max_digits));
        }

        /// Long runs of digits, under caps below and above 16 (past 16
        /// digits both drop the same high bits).
        #[test]
        fn long_runs_agree(digits in "[0-9a-fA-F]{0,40}", tail in "[- :g]{0,3}") {
            let line = format!("{digits}{tail}");
            for max_digits in [8, 16, 40] {
                let [words, single] = both(line.as_bytes(), b'-', max_digits);
                prop_assert_eq!(words, single);
                prop_assert_eq!(hex(digits.as_bytes(), max_digits), hex_bytewise(digits.as_bytes(), max_digits));
            }
        }
    }
}
