//! The kernel's own meminfo lines, read byte by byte without allocating:
//! ASCII, `[Node N ]Key: digits[ kB]`. This is every line of a real file,
//! and about a tenth of the work of the general reader (`lines`, `trim`,
//! `split_whitespace`, `str::parse`), which `meminfo` runs per start.
//!
//! Anything else (Unicode, a sign, a missing or overflowing number, an
//! unknown unit, no colon) is [`Plain::Unsure`], and the general reader in
//! `meminfo.rs` decides that line with its own errors; so the two agree on
//! every line by construction, and the tests check it against the old
//! parser on arbitrary input.

pub(super) enum Plain<'a> {
    /// Only whitespace: skipped.
    Empty,
    /// The trimmed key and the value (bytes where the kernel gave kB).
    Entry(&'a str, u64),
    /// Not the plain shape: for the general reader.
    Unsure,
}

/// What `char::is_whitespace` says of an ASCII byte; it takes the vertical
/// tab, which `u8::is_ascii_whitespace` does not.
fn is_space(byte: u8) -> bool {
    matches!(byte, b'\t' | b'\n' | 0x0b | 0x0c | b'\r' | b' ')
}

/// `str::trim` for ASCII text: cuts at ASCII bytes are char boundaries.
fn trim(text: &str) -> &str {
    let bytes = text.as_bytes();
    let start = bytes.iter().position(|b| !is_space(*b)).unwrap_or(bytes.len());
    let end = bytes.iter().rposition(|b| !is_space(*b)).map_or(start, |last| last + 1);
    &text[start..end]
}

fn trim_start(text: &str) -> &str {
    let start = text.bytes().position(|b| !is_space(b)).unwrap_or(text.len());
    &text[start..]
}

pub(super) fn plain_entry(line: &str) -> Plain<'_> {
    if !line.is_ascii() {
        return Plain::Unsure;
    }
    let line = trim(line);
    if line.is_empty() {
        return Plain::Empty;
    }
    let line = strip_node_prefix(line);
    let Some(colon) = line.bytes().position(|b| b == b':') else {
        return Plain::Unsure;
    };
    match value(&line.as_bytes()[colon + 1..]) {
        Some(value) => Plain::Entry(trim(&line[..colon]), value),
        None => Plain::Unsure,
    }
}

/// `Node 0 MemTotal: …` → `MemTotal: …`, as the general reader's
/// `strip_node_prefix` does it for ASCII (an empty id included).
fn strip_node_prefix(line: &str) -> &str {
    let Some(rest) = line.strip_prefix("Node ") else {
        return line;
    };
    match rest.bytes().position(is_space) {
        Some(end) if rest.as_bytes()[..end].iter().all(u8::is_ascii_digit) => trim_start(&rest[end + 1..]),
        _ => line,
    }
}

/// The number after the colon, times 1024 when its unit is `kB`; `None`
/// where the general reader would have to judge (or reject) it. Words
/// after the unit are ignored, as that reader ignores them.
fn value(rest: &[u8]) -> Option<u64> {
    let mut at = skip_spaces(rest, 0);
    let start = at;
    let mut number: u64 = 0;
    while let Some(digit) = rest.get(at).filter(|b| b.is_ascii_digit()) {
        number = number.checked_mul(10)?.checked_add(u64::from(digit - b'0'))?;
        at += 1;
    }
    if at == start || rest.get(at).is_some_and(|b| !is_space(*b)) {
        return None;
    }
    at = skip_spaces(rest, at);
    if at == rest.len() {
        return Some(number);
    }
    let unit_end = rest[at..]
        .iter()
        .position(|b| is_space(*b))
        .map_or(rest.len(), |n| at + n);
    (&rest[at..unit_end] == b"kB").then(|| number.saturating_mul(1024))
}

fn skip_spaces(bytes: &[u8], from: usize) -> usize {
    bytes[from..]
        .iter()
        .position(|b| !is_space(*b))
        .map_or(bytes.len(), |n| from + n)
}
