//! The one text layer: how wide a text report may be, and the prose wrap
//! every text report goes through.
//!
//! Renderers build their lines freely; `export::render` then passes the
//! whole text through [`TextLayout::wrap`], so findings, remedies, notes,
//! warnings and the provenance line fit the terminal however a renderer
//! built them, and a new renderer cannot forget. Tables are fitted before
//! that, by `table` (which needs the column structure), so the wrap leaves
//! their lines alone: they already fit. The width is an argument, never a
//! global, so a test can render at 60 and 120 columns side by side.

use unicode_width::UnicodeWidthChar;

/// The width used without a terminal (a pipe, a file, `-o x.txt`).
pub const DEFAULT_WIDTH: usize = 100;
/// Narrower than this, nothing useful fits: a smaller `$COLUMNS` is raised.
pub const MIN_WIDTH: usize = 40;
/// A word after a number is its unit (`1.6 MiB`, `12 pages`) when it is at
/// most this long; the two are never put on separate lines.
const UNIT_MAX_CHARS: usize = 6;

/// How a text report is laid out: every line fits `width` display
/// columns, except a single token that cannot be broken (a long path) or
/// a `code span` wider than the line (a command to paste).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TextLayout {
    pub width: usize,
    /// ANSI colour, only for a terminal.
    pub colour: bool,
}

impl Default for TextLayout {
    fn default() -> Self {
        TextLayout::new(DEFAULT_WIDTH, false)
    }
}

impl TextLayout {
    pub fn new(width: usize, colour: bool) -> TextLayout {
        TextLayout {
            width: width.max(MIN_WIDTH),
            colour,
        }
    }

    /// The layout for text indented by `columns` (a table under a heading).
    pub fn indented(self, columns: usize) -> TextLayout {
        TextLayout {
            width: self.width.saturating_sub(columns).max(MIN_WIDTH / 2),
            ..self
        }
    }

    /// Every line of `text` that is wider than the layout, broken at spaces
    /// (never between a number and its unit) with its continuation lines
    /// indented: under the text after a label (`remedy:   …`,
    /// `numasleuth: warning: …`) or a two-space gap (`WARNING   title`),
    /// else two columns in from the line's own indent.
    pub fn wrap(&self, text: &str) -> String {
        let mut out = String::with_capacity(text.len() + text.len() / 16);
        for line in text.split_inclusive('\n') {
            let (body, newline) = match line.strip_suffix('\n') {
                Some(body) => (body, "\n"),
                None => (line, ""),
            };
            wrap_line(body, self.width, &mut out);
            out.push_str(newline);
        }
        out
    }
}

/// Display columns of `text`: East Asian wide characters count two, ANSI
/// colour sequences (`ESC [ … m`) none.
pub fn display_width(text: &str) -> usize {
    let mut width = 0;
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        if c == '\x1b' {
            skip_escape(&mut chars);
            continue;
        }
        width += c.width().unwrap_or(0);
    }
    width
}

/// Skips the rest of a CSI sequence (`[` parameters, then a final byte).
fn skip_escape(chars: &mut std::str::Chars<'_>) {
    if chars.clone().next() != Some('[') {
        return;
    }
    chars.next();
    for c in chars.by_ref() {
        if ('\u{40}'..='\u{7e}').contains(&c) {
            return;
        }
    }
}

/// One word of a line with the spaces before it.
struct Word<'a> {
    gap: &'a str,
    text: &'a str,
    /// Breaking before this word is allowed.
    breakable: bool,
}

fn words(body: &str) -> Vec<Word<'_>> {
    let mut out: Vec<Word<'_>> = Vec::new();
    let mut rest = body;
    // Inside a `code span` (a remedy's command): never broken, so the
    // command can be pasted whole.
    let mut in_code = false;
    while !rest.is_empty() {
        let text_start = rest.find(|c: char| c != ' ').unwrap_or(rest.len());
        let (gap, tail) = rest.split_at(text_start);
        let text_end = tail.find(' ').unwrap_or(tail.len());
        let (text, remainder) = tail.split_at(text_end);
        if text.is_empty() {
            break;
        }
        let breakable = match out.last() {
            None => false,
            Some(_) if in_code => false,
            Some(previous) => {
                let glued = is_unit_after(previous.text, text) || is_number_after_label(previous.text, text);
                !(gap == " " && glued)
            }
        };
        if text.matches('`').count() % 2 == 1 {
            in_code = !in_code;
        }
        out.push(Word { gap, text, breakable });
        rest = remainder;
    }
    keep_short_parentheses(&mut out);
    out
}

/// A parenthesis this wide or narrower stays on one line: `(git
/// e834076d5119)`, `(Linux 6.1.0-26-amd64)`, `(placement verified)`.
const SHORT_PARENTHESIS_COLUMNS: usize = 24;

fn keep_short_parentheses(words: &mut [Word<'_>]) {
    let mut i = 0;
    while i < words.len() {
        let opens = words[i].text.starts_with('(') && !words[i].text.contains(')');
        let close = opens
            .then(|| (i + 1..words.len()).find(|&k| words[k].text.contains(')') || words[k].text.contains('(')))
            .flatten()
            .filter(|&k| !words[k].text.contains('('));
        let Some(close) = close else {
            i += 1;
            continue;
        };
        let width: usize = (i..=close)
            .map(|k| display_width(words[k].text) + if k == i { 0 } else { words[k].gap.len() })
            .sum();
        if width <= SHORT_PARENTHESIS_COLUMNS {
            for word in &mut words[i + 1..=close] {
                word.breakable = false;
            }
        }
        i = close + 1;
    }
}

/// Words that name what the number after them counts: `node 1`, `CPU 3`.
const LABELS: &[&str] = &[
    "node", "nodes", "Node", "CPU", "CPUs", "cpu", "cpus", "tid", "pid", "process", "thread", "IRQ", "irq",
];

/// `node` then `1`, `CPUs` then `0-3`: a label and the number it names.
pub(crate) fn is_number_after_label(previous: &str, word: &str) -> bool {
    LABELS.contains(&previous) && word.starts_with(|c: char| c.is_ascii_digit())
}

/// `1.6` then `MiB`, `12` then `pages`: a number and the short word after it.
pub(crate) fn is_unit_after(previous: &str, word: &str) -> bool {
    // `N1=4 KiB`, `t=1.5 s`: the number is what follows a label's `=`.
    let value = previous.rsplit(['=', ':']).next().unwrap_or(previous);
    let number = value.trim_start_matches(['(', '~', '≈', '±', '-', '+', '×']);
    let is_number = number.starts_with(|c: char| c.is_ascii_digit()) && number.ends_with(|c: char| c.is_ascii_digit());
    let is_unit = word.starts_with(|c: char| c.is_alphabetic() || c == '%' || c == 'µ' || c == '/')
        && word.chars().count() <= UNIT_MAX_CHARS;
    is_number && is_unit
}

fn wrap_line(body: &str, width: usize, out: &mut String) {
    // No character is shown wider than its UTF-8 bytes (a wide one takes
    // three or four), so a line short in bytes fits without measuring it.
    if body.len() <= width || display_width(body) <= width {
        out.push_str(body);
        return;
    }
    let lead = body.len() - body.trim_start_matches(' ').len();
    let hang = hanging_indent(body, lead, width);
    let words = words(&body[lead..]);
    let mut used = lead;
    out.push_str(&body[..lead]);
    let mut line_has_word = false;
    let mut i = 0;
    while i < words.len() {
        // The run of words that must stay together starting at `i`.
        let mut end = i + 1;
        while end < words.len() && !words[end].breakable {
            end += 1;
        }
        let run_width: usize = words[i..end]
            .iter()
            .enumerate()
            .map(|(k, w)| display_width(w.text) + if k == 0 { 0 } else { w.gap.len() })
            .sum();
        let gap = if line_has_word { words[i].gap.len() } else { 0 };
        if line_has_word && used + gap + run_width > width {
            out.push('\n');
            out.push_str(&" ".repeat(hang));
            used = hang;
            line_has_word = false;
            continue;
        }
        if line_has_word {
            out.push_str(words[i].gap);
        }
        for (k, w) in words[i..end].iter().enumerate() {
            if k > 0 {
                out.push_str(w.gap);
            }
            out.push_str(w.text);
        }
        used += gap + run_width;
        line_has_word = true;
        i = end;
    }
}

/// Where continuation lines start: after a label's colon and its spaces,
/// or after a two-space gap, whichever comes first within the first third
/// of the width; else two columns in from the line's indent.
fn hanging_indent(body: &str, lead: usize, width: usize) -> usize {
    let fallback = (lead + 2).min(width / 2);
    let limit = width / 3;
    let text = &body[lead..];
    if ["- ", "* ", "• "].iter().any(|bullet| text.starts_with(bullet)) {
        return fallback;
    }
    let bytes = text.as_bytes();
    let mut column = lead;
    // 0: text; 1: after ESC; 2: inside `ESC [ …` until its final byte.
    let mut escape = 0;
    for (at, c) in text.char_indices() {
        match (escape, c) {
            (0, '\x1b') => escape = 1,
            (1, '[') => escape = 2,
            (1, _) => escape = 0,
            (2, c) => {
                if ('\u{40}'..='\u{7e}').contains(&c) {
                    escape = 0;
                }
            }
            _ => {
                if column > limit {
                    break;
                }
                let label_end = c == ':' && bytes.get(at + 1) == Some(&b' ');
                let gap = c == ' ' && bytes.get(at + 1) == Some(&b' ') && at > 0;
                if label_end || gap {
                    let after = &text[at + 1..];
                    let spaces = after.len() - after.trim_start_matches(' ').len();
                    let indent = column + 1 + spaces;
                    return if indent <= limit { indent } else { fallback };
                }
                column += c.width().unwrap_or(0);
            }
        }
    }
    fallback
}

#[cfg(test)]
#[path = "layout_tests.rs"]
mod tests;
