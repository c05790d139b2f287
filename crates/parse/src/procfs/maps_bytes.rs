//! One maps line parsed from its bytes into a [`Mapping`] the caller keeps,
//! for `inspect`'s stream of 50,000 lines or more.
//!
//! One pass over the bytes, numbers read by hand, nothing allocated per
//! line: only the path is text, so only its bytes are checked as UTF-8, and
//! only when they differ from the path already held (a library's four or
//! five mappings in a row share one). A line this fast path does not take
//! as the kernel writes it (a `+` before a number, a malformed field) goes
//! to [`parse_line`], whose value or error is then the answer; the fast
//! path never answers differently (a property test checks).

use super::{parse_line, path_kind, Backing, Mapping, PathKind, Perms};
use crate::error::ParseError;
use crate::procfs::digits::{self, Cursor};

/// Parses one line of `/proc/PID/maps`, without its newline, into `out`,
/// reusing its path's buffer. Bytes that are not UTF-8 in the path are
/// shown lossily. On an error `out` holds a partial line and must not be
/// used.
pub fn parse_line_into(line: &[u8], out: &mut Mapping) -> Result<(), ParseError> {
    if fast(line, out).is_none() {
        *out = parse_line(&String::from_utf8_lossy(line))?;
    }
    Ok(())
}

fn flag(byte: u8, yes: u8) -> Option<bool> {
    match byte {
        b'-' => Some(false),
        b if b == yes => Some(true),
        _ => None,
    }
}

fn perms(bytes: &[u8]) -> Option<Perms> {
    let &[read, write, exec, share] = bytes else {
        return None;
    };
    Some(Perms {
        read: flag(read, b'r')?,
        write: flag(write, b'w')?,
        exec: flag(exec, b'x')?,
        shared: match share {
            b's' => true,
            b'p' => false,
            _ => return None,
        },
    })
}

/// `None`: not the kernel's plain spelling; [`parse_line`] decides. Each
/// field must end in the byte that ends it in the kernel's format, so the
/// line is read once, left to right.
fn fast(line: &[u8], out: &mut Mapping) -> Option<()> {
    // As `parse_line` trims them.
    let newlines = line.iter().rev().take_while(|&&b| b == b'\n').count();
    let mut cursor = Cursor::new(&line[..line.len() - newlines]);
    cursor.skip_spaces();
    out.start = cursor.hex_until(b'-', 16)?;
    out.end = cursor.hex_until(b' ', 16)?;
    if out.end < out.start {
        return None;
    }
    cursor.skip_spaces();
    out.perms = perms(cursor.until(b' ', false)?)?;
    cursor.skip_spaces();
    out.offset_bytes = cursor.hex_until(b' ', 16)?;
    cursor.skip_spaces();
    out.dev_major = cursor.hex_until(b':', 8)? as u32;
    out.dev_minor = cursor.hex_until(b' ', 8)? as u32;
    cursor.skip_spaces();
    let inode = cursor.until(b' ', true)?;
    out.inode = digits::decimal(inode)?;
    cursor.skip_spaces();
    set_backing(&mut out.backing, cursor.rest(), inode != b"0");
    Some(())
}

/// What [`super::backing`] makes of `path` (the same [`path_kind`]),
/// written over `backing` without a new allocation when the path is the
/// one it already holds.
fn set_backing(backing: &mut Backing, path: &[u8], has_inode: bool) {
    match (path_kind(path, has_inode), backing) {
        (PathKind::Anonymous, Backing::Anonymous) => {}
        (PathKind::Special, Backing::Special(held)) if held.as_bytes() == path => {}
        (
            PathKind::File { path, deleted },
            Backing::File {
                path: held,
                deleted: held_deleted,
            },
        ) if held.as_bytes() == path => *held_deleted = deleted,
        (PathKind::Anonymous, backing) => *backing = Backing::Anonymous,
        (PathKind::Special, backing) => *backing = Backing::Special(text(path)),
        (PathKind::File { path, deleted }, backing) => {
            *backing = Backing::File {
                path: text(path),
                deleted,
            }
        }
    }
}

/// A path's bytes as text: an ASCII byte ends any invalid UTF-8 sequence,
/// so converting the path alone gives what converting its line would.
fn text(path: &[u8]) -> String {
    String::from_utf8_lossy(path).into_owned()
}

#[cfg(test)]
#[path = "maps_bytes_tests.rs"]
mod tests;
