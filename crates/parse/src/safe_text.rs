//! The one sanitiser for text that reaches a terminal.
//!
//! Strings numasleuth prints come from places it does not control: a
//! snapshot's `cpuinfo` model name, a process's `comm`, a path, an ELF
//! symbol, an event name in a `pmu --json` file, a field name serde quotes
//! from a hostile journal. Any of them may hold ESC, BEL, a CSI or OSC
//! sequence, or a bidi override: bytes that move the cursor, clear the
//! screen, retitle the terminal or make text read backwards. One rule,
//! [`needs_escape`], says which characters those are, and every way out
//! applies it once, at the boundary, whatever the string's origin:
//!
//! - [`for_terminal`]: text reports, CSV, HTML, SVG and every message on
//!   stderr. Newlines and tabs are kept (they are the layout); everything
//!   else that needs it becomes `\x1b` or `\u{202e}`, visible and inert.
//! - [`for_terminal_in_colour`]: the same, keeping only the colour
//!   sequences our own renderers write when stdout is a terminal.
//! - [`for_json`]: a JSON document, where the same characters become
//!   `\u001b` or `\u202e` escapes: the document means exactly what it meant,
//!   and no raw one is left for a terminal (serde escapes C0 controls, but
//!   writes DEL, C1 controls and bidi overrides raw).
//!
//! `error::quote` and `error::escape` use the same rule for content
//! quoted in an error, with a length cut for file content.

use std::borrow::Cow;
use std::fmt::Write;

/// C0 and C1 controls (ESC, CR, NUL, CSI…), DEL, and the format characters
/// that reorder or hide text (bidi overrides, zero-width marks, line and
/// paragraph separators, tag characters).
pub fn needs_escape(c: char) -> bool {
    c.is_control()
        || matches!(
            c as u32,
            0xad | 0x061c
                | 0x180e
                | 0x200b..=0x200f
                | 0x2028..=0x202e
                | 0x2060..=0x206f
                | 0xfeff
                | 0xfff9..=0xfffb
                | 0xe0000..=0xe007f
        )
}

/// `c` as an inert, visible escape: `\n`, `\x1b`, `\u{202e}`.
pub(crate) fn push_escaped(out: &mut String, c: char) {
    match c {
        '\n' => out.push_str("\\n"),
        '\r' => out.push_str("\\r"),
        '\t' => out.push_str("\\t"),
        c if (c as u32) < 0x100 && needs_escape(c) => {
            let _ = write!(out, "\\x{:02x}", c as u32);
        }
        c if needs_escape(c) => {
            let _ = write!(out, "\\u{{{:x}}}", c as u32);
        }
        c => out.push(c),
    }
}

/// Printable ASCII, newlines and tabs: what nearly every report is made
/// of, and nothing any rule here escapes. Checked a byte at a time, where
/// decoding each char for [`needs_escape`] costs a report its largest
/// single share of the work of printing it.
fn plain_ascii(text: &str) -> bool {
    // A block at a time with no early exit inside it, which the compiler
    // turns into vector compares; a byte-wise `all` stays a byte loop.
    let plain = |b: u8| (b' '..=b'~').contains(&b) | (b == b'\n') | (b == b'\t');
    text.as_bytes()
        .chunks(32)
        .all(|block| block.iter().fold(true, |all, &b| all & plain(b)))
}

/// Layout characters a text report is made of.
fn is_layout(c: char) -> bool {
    c == '\n' || c == '\t'
}

/// Text for a terminal: newlines and tabs kept, every other character
/// [`needs_escape`] names escaped. Borrowed when nothing needed it.
pub fn for_terminal(text: &str) -> Cow<'_, str> {
    if plain_ascii(text) || !text.chars().any(|c| needs_escape(c) && !is_layout(c)) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        if is_layout(c) {
            out.push(c);
        } else {
            push_escaped(&mut out, c);
        }
    }
    Cow::Owned(out)
}

/// A colour sequence our renderers write (`heatmap`, `doctor_text`):
/// `ESC [ P m` where P is `0`, a foreground or bold/dim code, or `38;5;N`.
/// Nothing that moves the cursor, clears, retitles or hides text (SGR 8,
/// conceal, is not among them). Returns its length in bytes.
fn our_colour_at(text: &str) -> Option<usize> {
    let rest = text.strip_prefix("\x1b[")?;
    let end = rest.find('m').filter(|end| *end <= 12)?;
    let params = &rest[..end];
    let allowed = match params.strip_prefix("38;5;") {
        Some(index) => index.parse::<u8>().is_ok(),
        None => {
            matches!(params, "0" | "1" | "2" | "22" | "39")
                || params
                    .parse::<u8>()
                    .is_ok_and(|p| (30..=37).contains(&p) || (90..=97).contains(&p))
        }
    };
    allowed.then_some(2 + end + 1)
}

/// [`for_terminal`] for a report rendered in colour: our own colour
/// sequences pass, every other escape is made inert.
pub fn for_terminal_in_colour(text: &str) -> Cow<'_, str> {
    if plain_ascii(text) || !text.chars().any(|c| needs_escape(c) && !is_layout(c)) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    let mut at = 0;
    while let Some(c) = text[at..].chars().next() {
        if let Some(len) = our_colour_at(&text[at..]) {
            out.push_str(&text[at..at + len]);
            at += len;
            continue;
        }
        if is_layout(c) {
            out.push(c);
        } else {
            push_escaped(&mut out, c);
        }
        at += c.len_utf8();
    }
    Cow::Owned(out)
}

/// A JSON document with every character [`needs_escape`] names written as
/// a `\uXXXX` escape (a surrogate pair above U+FFFF). Raw controls cannot
/// appear in a JSON string, and outside strings only the whitespace
/// between tokens can; so every replacement is inside a string, and the
/// document parses to the same value.
pub fn for_json(text: &str) -> Cow<'_, str> {
    let escaped = |c: char| needs_escape(c) && !matches!(c, '\n' | '\t' | '\r');
    if plain_ascii(text) || !text.chars().any(escaped) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        if escaped(c) {
            let mut units = [0u16; 2];
            for unit in c.encode_utf16(&mut units) {
                let _ = write!(out, "\\u{unit:04x}");
            }
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const HOSTILE: &str = "a\x1b]0;title\x07b\x1b[2Jc\u{9b}31md\u{202e}e\r\u{e0041}";

    /// [`for_terminal`] without its ASCII fast path, as it was.
    fn for_terminal_general(text: &str) -> Cow<'_, str> {
        if !raw_controls(text) {
            return Cow::Borrowed(text);
        }
        Cow::Owned(text.chars().fold(String::new(), |mut out, c| {
            if is_layout(c) {
                out.push(c);
            } else {
                push_escaped(&mut out, c);
            }
            out
        }))
    }

    fn raw_controls(text: &str) -> bool {
        text.chars().any(|c| needs_escape(c) && !is_layout(c))
    }

    #[test]
    fn terminal_text_keeps_layout_and_escapes_the_rest() {
        let safe = for_terminal(HOSTILE);
        assert_eq!(safe, "a\\x1b]0;title\\x07b\\x1b[2Jc\\x9b31md\\u{202e}e\\r\\u{e0041}");
        assert_eq!(for_terminal("a\tb\nc µs ↔"), "a\tb\nc µs ↔");
        assert!(matches!(for_terminal("plain"), Cow::Borrowed(_)));
    }

    #[test]
    fn colour_keeps_only_our_sequences() {
        let ours = "\x1b[38;5;46m92.1\x1b[0m \x1b[31mred\x1b[0m \x1b[1mbold\x1b[0m";
        assert_eq!(for_terminal_in_colour(ours), ours);
        for hostile in [
            "\x1b[8mhidden",
            "\x1b[2J",
            "\x1b[1;1H",
            "\x1b]0;t\x07",
            "\x1b[38;5;999m",
            "\x1b[",
            "\x1b",
        ] {
            let safe = for_terminal_in_colour(hostile);
            assert!(!safe.contains('\x1b'), "{hostile:?} gave {safe:?}");
        }
    }

    #[test]
    fn json_stays_the_same_document() {
        let value = serde_json::json!({"name": HOSTILE, "del": "\x7f", "tag": "\u{e0041}"});
        let text = serde_json::to_string_pretty(&value).unwrap();
        let safe = for_json(&text);
        assert!(!raw_controls(&safe), "{safe}");
        let back: serde_json::Value = serde_json::from_str(&safe).unwrap();
        assert_eq!(back, value);
    }

    proptest! {
        #[test]
        fn plain_ascii_needs_no_escape(text in "(?s).{0,100}|[\\x00-\\x{ff}]{0,100}|[ -\\x7f\n\t]{0,60}") {
            if plain_ascii(&text) {
                prop_assert!(!text.chars().any(|c| needs_escape(c) && !is_layout(c)), "{:?}", text);
            }
            // The fast path changes no answer.
            prop_assert_eq!(for_terminal(&text), for_terminal_general(&text));
        }

        #[test]
        fn nothing_raw_is_left(text in "\\PC{0,200}|[\\x00-\\x{ff}]{0,200}|[\\x{2000}-\\x{2070}]{0,50}") {
            prop_assert!(!raw_controls(&for_terminal(&text)));
            prop_assert!(!raw_controls(&for_terminal(&for_terminal(&text))));
            let json = serde_json::to_string(&text).unwrap();
            let safe = for_json(&json);
            prop_assert!(!raw_controls(&safe));
            prop_assert_eq!(serde_json::from_str::<String>(&safe).unwrap(), text);
        }
    }
}
