//! `/proc/meminfo` and `/sys/devices/system/node/nodeN/meminfo`.
//!
//! Both are `Key: value [kB]` lines; the node file prefixes each line with
//! `Node N `. One parser serves both so their numbers mean the same thing.

use std::collections::BTreeMap;

use crate::error::{quote, ParseError};

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
    let mut values = BTreeMap::new();
    for (index, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() {
            continue;
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
        values.insert(key.trim().to_string(), value);
        if values.len() > crate::read::MAX_KEYS {
            return Err(crate::read::too_many_keys());
        }
    }
    if values.is_empty() {
        return Err(ParseError::new("no entries"));
    }
    Ok(Meminfo { values })
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
mod tests {
    use super::*;
    use proptest::prelude::*;

    // From this project's development VM (Linux 6.18, 1 node, 24 GiB).
    const NODE: &str = "Node 0 MemTotal:       24630920 kB\nNode 0 MemFree:        23641048 kB\n\
Node 0 HugePages_Total:     0\nNode 0 HugePages_Free:      0\n";

    #[test]
    fn node_meminfo_in_bytes() {
        let info = parse(NODE).unwrap();
        assert_eq!(info.total_bytes(), Some(24630920 * 1024));
        assert_eq!(info.free_bytes(), Some(23641048 * 1024));
        assert_eq!(info.get("HugePages_Total"), Some(0));
    }

    #[test]
    fn proc_meminfo_without_prefix() {
        let info = parse("MemTotal:       24630920 kB\nHugepagesize:       2048 kB\nHugePages_Total: 4\n").unwrap();
        assert_eq!(info.hugetlb_bytes(), Some(4 * 2048 * 1024));
    }

    #[test]
    fn truncated_line_is_an_error() {
        assert!(parse("Node 0 MemTotal:").is_err());
        assert!(parse("").is_err());
        assert!(parse("MemTotal 12 kB").is_err());
    }

    proptest! {
        #[test]
        fn never_panics(text in "(Node [0-9] )?[A-Za-z_]{0,8}:? {0,3}[0-9]{0,25} ?(kB|MB)?\n?") {
            let _ = parse(&text);
        }
    }
}
