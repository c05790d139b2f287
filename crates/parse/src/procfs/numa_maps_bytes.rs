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
use crate::procfs::digits;

/// Parses one line of numa_maps, without its newline, into `entry`, reusing
/// its buffers. On an error `entry` holds a partial line and must not be
/// used.
pub fn parse_bytes_into(line: &[u8], entry: &mut NumaMapsEntry) -> Result<(), ParseError> {
    // Past ASCII, `str::trim_end` and the lossy conversion of the line
    // decide what a word is: the `&str` parser's business.
    if !line.is_ascii() || fast(line, entry).is_none() {
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
    let line = &line[..kept];
    let (start, rest) = match line.iter().position(|&b| b == b' ') {
        Some(at) => (&line[..at], &line[at + 1..]),
        None => (line, &[][..]),
    };
    entry.reset(digits::hex(start, 16)?);
    let rest = &rest[rest.iter().position(|&b| !is_space(b)).unwrap_or(rest.len())..];
    let (policy, fields) = rest.split_at(policy_len(rest));
    if !policy.is_empty() {
        entry.policy = Some(policy_of(policy)?);
    }
    let mut has_file = false;
    // `split_ascii_whitespace`'s blanks, as the `&str` parser splits words.
    for word in fields.split(u8::is_ascii_whitespace).filter(|w| !w.is_empty()) {
        has_file |= take_word(word, entry)?;
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

/// Folds one `key=value` or bare word into `entry`; `Some(true)` for a
/// `file=`.
fn take_word(word: &[u8], entry: &mut NumaMapsEntry) -> Option<bool> {
    let (key, value) = match word.iter().position(|&b| b == b'=') {
        Some(at) => (&word[..at], Some(&word[at + 1..])),
        None => (word, None),
    };
    let count = || value.and_then(digits::decimal);
    match (key, value) {
        (b"file", Some(path)) => {
            set_file(entry.file.get_or_insert_with(String::new), path)?;
            return Some(true);
        }
        (b"heap", None) => entry.heap = true,
        (b"stack", None) => entry.stack = true,
        (b"huge", None) => entry.huge = true,
        (b"anon", _) => entry.anon_pages = Some(count()?),
        (b"dirty", _) => entry.dirty_pages = Some(count()?),
        (b"mapped", _) => entry.mapped_pages = Some(count()?),
        (b"mapmax", _) => entry.mapmax = Some(count()?),
        (b"swapcache", _) => entry.swapcache_pages = Some(count()?),
        (b"active", _) => entry.active_pages = Some(count()?),
        (b"writeback", _) => entry.writeback_pages = Some(count()?),
        (b"kernelpagesize_kB", _) => entry.kernel_page_size_kb = Some(count()?),
        ([b'N', id @ ..], _) if !id.is_empty() && id.iter().all(u8::is_ascii_digit) => {
            let id = u32::try_from(digits::decimal(id)?).ok()?;
            if id >= crate::cpulist::MAX_NODE_IDS {
                return None;
            }
            entry.pages_by_node.push((id, count()?));
        }
        _ => entry.unknown.push(std::str::from_utf8(word).ok()?.to_string()),
    }
    Some(false)
}

/// `file=`'s value, unescaped, over the path `held`; a path equal to the
/// one held (the mappings of one library follow each other) is left as is.
fn set_file(held: &mut String, path: &[u8]) -> Option<()> {
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
