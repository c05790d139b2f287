//! The first and fastest way to read a numa_maps line: only as
//! `show_numa_map` (mm/mempolicy.c) writes it, the `default` policy and then
//! its words in the kernel's spelling, one space before each, nothing after
//! the last. Each byte is looked at once: a word is known by its first byte
//! and prefix, and its number is read as the cursor passes. Any other line
//! (another policy, a word this does not know, two blanks, a tab) is left
//! to the general parsers; this one never answers for it (`None`).

use super::{NumaMapsEntry, Policy, PolicyMode};
use crate::procfs::digits::{self, Cursor};

/// Digits up to a space or the end of `rest`, and what follows them;
/// `None` for no digits, overflow, or any other byte after them.
fn number(rest: &[u8]) -> Option<(u64, &[u8])> {
    let (count, after) = rest.split_at(rest.iter().position(|&b| b == b' ').unwrap_or(rest.len()));
    Some((digits::decimal(count)?, after))
}

/// `Some` only for a line in the kernel's own spelling, parsed into `entry`
/// exactly as the general parsers would.
pub(super) fn parse(line: &[u8], entry: &mut NumaMapsEntry) -> Option<()> {
    // The `&str` parser trims the line's end by `char::is_whitespace`,
    // which takes the vertical tab that the split below leaves inside a
    // path: a line ending in any such blank is not the kernel's spelling.
    if matches!(line.last(), Some(b'\t'..=b'\r' | b' ')) {
        return None;
    }
    let mut cursor = Cursor::new(line);
    let start = cursor.hex_until(b' ', 16)?;
    let mut rest = cursor.rest().strip_prefix(b"default")?;
    entry.reset(start);
    entry.policy = Some(Policy {
        mode: PolicyMode::Default,
        flags: Vec::new(),
        nodes: None,
    });
    let mut has_file = false;
    while !rest.is_empty() {
        rest = rest.strip_prefix(b" ")?;
        rest = match *rest.first()? {
            b'f' => {
                let path = rest.strip_prefix(b"file=")?;
                // Up to any blank `split_ascii_whitespace` splits on; one
                // that is not a space then fails the loop's check.
                let length = path.iter().position(u8::is_ascii_whitespace).unwrap_or(path.len());
                super::bytes::set_file(entry.file.get_or_insert_with(String::new), &path[..length])?;
                has_file = true;
                &path[length..]
            }
            // A bare word must end where it does: what follows is checked
            // by the loop (a space, or the end).
            b'h' => match rest.strip_prefix(b"heap") {
                Some(after) => {
                    entry.heap = true;
                    after
                }
                None => {
                    entry.huge = true;
                    rest.strip_prefix(b"huge")?
                }
            },
            b's' if rest.starts_with(b"stack") => {
                entry.stack = true;
                &rest[b"stack".len()..]
            }
            b'N' => {
                let (id, after) = rest[1..].split_at(rest[1..].iter().position(|&b| b == b'=')?);
                let id = super::node_id(id)?;
                // `after` starts at the `=` found above.
                let (pages, after) = number(&after[1..])?;
                entry.pages_by_node.push((id, pages));
                after
            }
            _ => counter(rest, entry)?,
        };
    }
    if !has_file {
        entry.file = None;
    }
    Some(())
}

/// A `key=count` word the kernel writes, read into its field.
fn counter<'a>(rest: &'a [u8], entry: &mut NumaMapsEntry) -> Option<&'a [u8]> {
    let (slot, after) = if let Some(after) = rest.strip_prefix(b"anon=") {
        (&mut entry.anon_pages, after)
    } else if let Some(after) = rest.strip_prefix(b"dirty=") {
        (&mut entry.dirty_pages, after)
    } else if let Some(after) = rest.strip_prefix(b"active=") {
        (&mut entry.active_pages, after)
    } else if let Some(after) = rest.strip_prefix(b"kernelpagesize_kB=") {
        (&mut entry.kernel_page_size_kb, after)
    } else if let Some(after) = rest.strip_prefix(b"mapped=") {
        (&mut entry.mapped_pages, after)
    } else if let Some(after) = rest.strip_prefix(b"mapmax=") {
        (&mut entry.mapmax, after)
    } else if let Some(after) = rest.strip_prefix(b"swapcache=") {
        (&mut entry.swapcache_pages, after)
    } else if let Some(after) = rest.strip_prefix(b"writeback=") {
        (&mut entry.writeback_pages, after)
    } else {
        return None;
    };
    let (count, after) = number(after)?;
    *slot = Some(count);
    Some(after)
}
