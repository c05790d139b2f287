//! One numa_maps line parsed from its bytes into a [`NumaMapsEntry`] the
//! caller keeps, for `inspect`'s stream of 50,000 lines or more.
//!
//! One pass over the words, numbers read by hand, nothing allocated per line
//! for what the kernel writes (the `default` policy, counts, a path already
//! held). A line this fast path does not take as the kernel writes it (bytes
//! past ASCII, a `+` before a count, a malformed word) goes to
//! [`parse_line_into`], whose value or error is then the answer; the fast
//! path never answers differently (a property test checks).

use super::{parse_line_into, parse_policy, unescape, NumaMapsEntry, Policy, PolicyMode, SPACED_MODES};
use crate::error::ParseError;
use crate::procfs::digits::{self, Cursor};

/// Parses one line of numa_maps, without its newline, into `entry`, reusing
/// its buffers. On an error `entry` holds a partial line and must not be
/// used.
pub fn parse_bytes_into(line: &[u8], entry: &mut NumaMapsEntry) -> Result<(), ParseError> {
    // Past ASCII, `str::trim_end` and the lossy conversion of the line
    // decide what a word is: the `&str` parser's business.
    if !line.is_ascii() || (super::kernel::parse(line, entry).is_none() && fast(line, entry).is_none()) {
        parse_line_into(&String::from_utf8_lossy(line), entry)?;
    }
    Ok(())
}

/// `char::is_whitespace` on ASCII, which `str::trim_end` uses (it includes
/// the vertical tab that `u8::is_ascii_whitespace` leaves out).
fn is_space(byte: u8) -> bool {
    matches!(byte, b'\t'..=b'\r' | b' ')
}

/// `None`: not the kernel's plain spelling; [`parse_line_into`] decides.
fn fast(line: &[u8], entry: &mut NumaMapsEntry) -> Option<()> {
    let kept = line.iter().rposition(|&b| !is_space(b)).map_or(0, |at| at + 1);
    let mut cursor = Cursor::new(&line[..kept]);
    entry.reset(digits::hex(cursor.until(b' ', true)?, 16)?);
    let rest = cursor.rest();
    let rest = &rest[rest.iter().position(|&b| !is_space(b)).unwrap_or(rest.len())..];
    let (policy, fields) = rest.split_at(policy_len(rest));
    if !policy.is_empty() {
        entry.policy = Some(policy_of(policy)?);
    }
    let mut has_file = false;
    // `split_ascii_whitespace`'s blanks, as the `&str` parser splits
    // words; each word is scanned once, for its end and its `=`.
    let mut at = 0;
    while at < fields.len() {
        if fields[at].is_ascii_whitespace() {
            at += 1;
            continue;
        }
        let begin = at;
        let mut equals = None;
        while at < fields.len() && !fields[at].is_ascii_whitespace() {
            if fields[at] == b'=' && equals.is_none() {
                equals = Some(at - begin);
            }
            at += 1;
        }
        has_file |= take_word(&fields[begin..at], equals, entry)?;
    }
    if !has_file {
        entry.file = None;
    }
    Some(())
}

/// Bytes of the policy at the front of `rest`: up to a space, or past the
/// space inside a mode's own name.
fn policy_len(rest: &[u8]) -> usize {
    let skip = SPACED_MODES
        .iter()
        .find(|mode| rest.starts_with(mode.as_bytes()))
        .map_or(0, |mode| mode.len());
    rest[skip..]
        .iter()
        .position(|&b| b == b' ')
        .map_or(rest.len(), |at| skip + at)
}

/// The policy nearly every mapping has costs no text; others are parsed as
/// text (ASCII here, so no conversion can fail).
fn policy_of(policy: &[u8]) -> Option<Policy> {
    if policy == b"default" {
        return Some(Policy {
            mode: PolicyMode::Default,
            flags: Vec::new(),
            nodes: None,
        });
    }
    parse_policy(std::str::from_utf8(policy).ok()?).ok()
}

/// A key of up to eight bytes as one number, to match it with one compare
/// (with its length, so a NUL cannot pad one key into another).
const fn tag(key: &[u8]) -> (usize, u64) {
    let mut value = 0u64;
    let mut i = 0;
    while i < key.len() && i < 8 {
        value |= (key[i] as u64) << (8 * i);
        i += 1;
    }
    (key.len(), value)
}

const FILE: (usize, u64) = tag(b"file");
const HEAP: (usize, u64) = tag(b"heap");
const STACK: (usize, u64) = tag(b"stack");
const HUGE: (usize, u64) = tag(b"huge");
const ANON: (usize, u64) = tag(b"anon");
const DIRTY: (usize, u64) = tag(b"dirty");
const MAPPED: (usize, u64) = tag(b"mapped");
const MAPMAX: (usize, u64) = tag(b"mapmax");
const SWAPCACHE: (usize, u64) = tag(b"swapcache");
const ACTIVE: (usize, u64) = tag(b"active");
const WRITEBACK: (usize, u64) = tag(b"writeback");
const PAGE_SIZE_KEY: &[u8] = b"kernelpagesize_kB";

/// Folds one `key=value` or bare word (its `=` at `equals`) into `entry`;
/// `Some(true)` for a `file=`.
fn take_word(word: &[u8], equals: Option<usize>, entry: &mut NumaMapsEntry) -> Option<bool> {
    let (key, value) = match equals {
        Some(at) => (&word[..at], Some(&word[at + 1..])),
        None => (word, None),
    };
    let count = || value.and_then(digits::decimal);
    // Keys past eight bytes are compared whole; SWAPCACHE and WRITEBACK
    // tags cover their first eight, so check the rest.
    let tagged = if key.len() <= 9 { tag(key) } else { (0, 0) };
    match (tagged, value.is_some()) {
        (FILE, true) => {
            set_file(entry.file.get_or_insert_with(String::new), value?)?;
            return Some(true);
        }
        (HEAP, false) => entry.heap = true,
        (STACK, false) => entry.stack = true,
        (HUGE, false) => entry.huge = true,
        (ANON, _) => entry.anon_pages = Some(count()?),
        (DIRTY, _) => entry.dirty_pages = Some(count()?),
        (MAPPED, _) => entry.mapped_pages = Some(count()?),
        (MAPMAX, _) => entry.mapmax = Some(count()?),
        (SWAPCACHE, _) if key == b"swapcache" => entry.swapcache_pages = Some(count()?),
        (ACTIVE, _) => entry.active_pages = Some(count()?),
        (WRITEBACK, _) if key == b"writeback" => entry.writeback_pages = Some(count()?),
        _ if key == PAGE_SIZE_KEY => entry.kernel_page_size_kb = Some(count()?),
        _ => match key {
            [b'N', id @ ..] if !id.is_empty() && id.iter().all(u8::is_ascii_digit) => {
                entry.pages_by_node.push((super::node_id(id)?, count()?));
            }
            _ => entry.unknown.push(std::str::from_utf8(word).ok()?.to_string()),
        },
    }
    Some(false)
}

/// `file=`'s value, unescaped, over the path `held`; a path equal to the
/// one held (the mappings of one library follow each other) is left as is.
pub(super) fn set_file(held: &mut String, path: &[u8]) -> Option<()> {
    if path.contains(&b'\\') {
        *held = unescape(std::str::from_utf8(path).ok()?);
    } else if held.as_bytes() != path {
        held.clear();
        held.push_str(std::str::from_utf8(path).ok()?);
    }
    Some(())
}

#[cfg(test)]
#[path = "numa_maps_bytes_tests.rs"]
mod tests;
