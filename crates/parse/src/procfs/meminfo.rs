//! `/proc/meminfo` and `/sys/devices/system/node/nodeN/meminfo`.
//!
//! Both are `Key: value [kB]` lines; the node file prefixes each line with
//! `Node N `. One parser serves both so their numbers mean the same thing.

use std::collections::BTreeMap;

use crate::error::{quote, ParseError};

#[path = "meminfo_plain.rs"]
mod plain;
use plain::{plain_entry, Plain};

/// Values in bytes where the kernel gave kB, raw counts otherwise
/// (`HugePages_Total`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Meminfo {
    pub values: BTreeMap<String, u64>,
}

impl Meminfo {
    pub fn get(&self, key: &str) -> Option<u64> {
        self.values.get(key).copied()
    }

    pub fn total_bytes(&self) -> Option<u64> {
        self.get("MemTotal")
    }

    pub fn free_bytes(&self) -> Option<u64> {
        self.get("MemFree")
    }

    /// Memory held by hugetlb pools, which the kernel counts in MemTotal but
    /// no ordinary allocation can use.
    pub fn hugetlb_bytes(&self) -> Option<u64> {
        let pages = self.get("HugePages_Total")?;
        let page_bytes = self.get("Hugepagesize")?;
        Some(pages.saturating_mul(page_bytes))
    }
}

pub fn parse(text: &str) -> Result<Meminfo, ParseError> {
    // Pieces between newlines number lines as `lines()` did: a `\r` before
    // a newline is trimmed with the other whitespace, and the empty piece
    // after a final newline is skipped like any empty line.
    collect(pieces(text).enumerate().map(|(index, line)| match plain_entry(line) {
        Plain::Empty => Ok(None),
        Plain::Entry(key, value) => Ok(Some((key, value))),
        Plain::Unsure => entry(index, line),
    }))
}

/// The entries in order, into one map: the first error stops it, a key
/// seen again keeps its last value, and the key cap holds.
fn collect<'a>(
    entries: impl Iterator<Item = Result<Option<(&'a str, u64)>, ParseError>>,
) -> Result<Meminfo, ParseError> {
    let mut values = BTreeMap::new();
    for entry in entries {
        let Some((key, value)) = entry? else {
            continue;
        };
        values.insert(key.to_string(), value);
        if values.len() > crate::read::MAX_KEYS {
            return Err(crate::read::too_many_keys());
        }
    }
    if values.is_empty() {
        return Err(ParseError::new("no entries"));
    }
    Ok(Meminfo { values })
}

/// `text.split('\n')` by a plain byte loop: a line of meminfo is shorter
/// than the set-up of `split`'s searcher.
fn pieces(text: &str) -> impl Iterator<Item = &str> {
    let mut rest = Some(text);
    std::iter::from_fn(move || {
        let current = rest?;
        match current.bytes().position(|b| b == b'\n') {
            Some(end) => {
                rest = Some(&current[end + 1..]);
                Some(&current[..end])
            }
            None => {
                rest = None;
                Some(current)
            }
        }
    })
}

/// One line the general way: any Unicode, every error worded. `None` for
/// an empty line.
fn entry(index: usize, line: &str) -> Result<Option<(&str, u64)>, ParseError> {
    let line = line.trim();
    if line.is_empty() {
        return Ok(None);
    }
    let line = strip_node_prefix(line);
    let (key, rest) = line
        .split_once(':')
        .ok_or_else(|| ParseError::new(format!("line {}: no `key:` in `{}`", index + 1, quote(line))))?;
    let mut words = rest.split_whitespace();
    let number: u64 = words
        .next()
        .and_then(|w| w.parse().ok())
        .ok_or_else(|| ParseError::new(format!("line {}: `{}` has no number", index + 1, quote(key.trim()))))?;
    let value = match words.next() {
        Some("kB") => number.saturating_mul(1024),
        None => number,
        Some(unit) => {
            return Err(ParseError::new(format!(
                "line {}: unknown unit `{}`",
                index + 1,
                quote(unit)
            )))
        }
    };
    Ok(Some((key.trim(), value)))
}

fn strip_node_prefix(line: &str) -> &str {
    let Some(rest) = line.strip_prefix("Node ") else {
        return line;
    };
    match rest.split_once(char::is_whitespace) {
        Some((id, tail)) if id.chars().all(|c| c.is_ascii_digit()) => tail.trim_start(),
        _ => line,
    }
}

#[cfg(test)]
#[path = "meminfo_tests.rs"]
mod tests;
