//! `/proc/PID/maps`: every mapping (VMA) of a process with its address
//! range, permissions, file offset and backing file.
//!
//! `numa_maps` gives only the start address of each VMA, so `inspect` joins
//! the two by start address: this file supplies the end, the permissions and
//! the file offset that ELF placement needs (the load bias comes from the
//! offset), and the inode that tells a file mapping from an anonymous one.
//!
//! The line format is `start-end perms offset major:minor inode   path`; the
//! path is everything after the padding and may hold spaces (the kernel
//! escapes only newlines, as `\012`), or be `[heap]`, `[stack]`, `[vdso]`, a
//! file ending in ` (deleted)`, or empty for anonymous memory.

use crate::error::{quote, ParseError};

#[path = "maps_bytes.rs"]
mod bytes;
pub use bytes::parse_line_into;

/// Permissions of a mapping, as the four `rwxp`/`rwxs` letters say.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct Perms {
    pub read: bool,
    pub write: bool,
    pub exec: bool,
    /// `s`: a shared mapping (writes reach the file or other processes);
    /// `p` is private copy-on-write.
    pub shared: bool,
}

impl Perms {
    pub fn parse(text: &str) -> Result<Self, ParseError> {
        let bytes = text.as_bytes();
        let flag = |i: usize, yes: u8| -> Result<bool, ParseError> {
            match bytes.get(i) {
                Some(&b) if b == yes => Ok(true),
                Some(b'-') => Ok(false),
                _ => Err(ParseError::new(format!(
                    "permissions `{}` are not like `rw-p`",
                    quote(text)
                ))),
            }
        };
        if bytes.len() != 4 {
            return Err(ParseError::new(format!(
                "permissions `{}` are not four letters",
                quote(text)
            )));
        }
        let shared = match bytes[3] {
            b's' => true,
            b'p' => false,
            _ => {
                return Err(ParseError::new(format!(
                    "permissions `{}` end in neither p nor s",
                    quote(text)
                )))
            }
        };
        Ok(Perms {
            read: flag(0, b'r')?,
            write: flag(1, b'w')?,
            exec: flag(2, b'x')?,
            shared,
        })
    }
}

impl std::fmt::Display for Perms {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let c = |on: bool, letter: char| if on { letter } else { '-' };
        write!(
            f,
            "{}{}{}{}",
            c(self.read, 'r'),
            c(self.write, 'w'),
            c(self.exec, 'x'),
            if self.shared { 's' } else { 'p' }
        )
    }
}

/// What backs a mapping.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum Backing {
    /// No path: anonymous memory (malloc arenas, thread stacks, mmap).
    #[default]
    Anonymous,
    /// A file. `deleted` when the kernel appended ` (deleted)`: the file was
    /// unlinked (or replaced by an upgrade) after it was mapped.
    File { path: String, deleted: bool },
    /// A bracketed name: `[heap]`, `[stack]`, `[vdso]`, `[vvar]`,
    /// `[vsyscall]`, `[anon:NAME]` (prctl-named anonymous memory), …
    Special(String),
}

impl Backing {
    pub fn path(&self) -> Option<&str> {
        match self {
            Backing::File { path, .. } => Some(path),
            _ => None,
        }
    }
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Mapping {
    pub start: u64,
    /// One past the last byte.
    pub end: u64,
    pub perms: Perms,
    /// File offset of `start`, in bytes; 0 for anonymous memory.
    pub offset_bytes: u64,
    pub dev_major: u32,
    pub dev_minor: u32,
    pub inode: u64,
    pub backing: Backing,
}

impl Mapping {
    pub fn len_bytes(&self) -> u64 {
        self.end.saturating_sub(self.start)
    }
}

/// Parses one line of `/proc/PID/maps`. Fields are split on bytes, not
/// chars (the separators are ASCII), as `inspect` parses one line per
/// mapping, 50,000 or more.
pub fn parse_line(line: &str) -> Result<Mapping, ParseError> {
    let bad = |what: &str| ParseError::new(format!("{what} in maps line `{}`", quote(line.trim_end())));
    let mut rest = line.trim_end_matches('\n');
    let mut field = || -> Option<&str> {
        let bytes = rest.as_bytes();
        let begin = bytes.iter().position(|&b| b != b' ').unwrap_or(bytes.len());
        let end = bytes[begin..]
            .iter()
            .position(|&b| b == b' ')
            .map_or(bytes.len(), |at| begin + at);
        // Both ends are at an ASCII byte or the end: char boundaries.
        let word = &rest[begin..end];
        rest = &rest[end..];
        (!word.is_empty()).then_some(word)
    };
    let range = field().ok_or_else(|| bad("no address range"))?;
    let perms = field().ok_or_else(|| bad("no permissions"))?;
    let offset = field().ok_or_else(|| bad("no offset"))?;
    let dev = field().ok_or_else(|| bad("no device"))?;
    let inode = field().ok_or_else(|| bad("no inode"))?;
    let (start, end) = split_at_byte(range, b'-').ok_or_else(|| bad("no `-` in the range"))?;
    let start = hex(start).ok_or_else(|| bad("bad start address"))?;
    let end = hex(end).ok_or_else(|| bad("bad end address"))?;
    if end < start {
        return Err(bad("range runs backwards"));
    }
    let (major, minor) = split_at_byte(dev, b':').ok_or_else(|| bad("device is not major:minor"))?;
    let mapping = Mapping {
        start,
        end,
        perms: Perms::parse(perms)?,
        offset_bytes: hex(offset).ok_or_else(|| bad("bad offset"))?,
        dev_major: u32::from_str_radix(major, 16).map_err(|_| bad("bad device"))?,
        dev_minor: u32::from_str_radix(minor, 16).map_err(|_| bad("bad device"))?,
        inode: inode.parse().map_err(|_| bad("bad inode"))?,
        backing: backing(rest.trim_start_matches(' '), inode != "0"),
    };
    Ok(mapping)
}

/// `text` around the first `separator` (an ASCII byte), like
/// `split_once`.
fn split_at_byte(text: &str, separator: u8) -> Option<(&str, &str)> {
    let at = text.bytes().position(|b| b == separator)?;
    Some((&text[..at], &text[at + 1..]))
}

/// What a maps line's path says backs the mapping, as slices of the path:
/// the one rule both parsers apply (`backing` here, `set_backing` in
/// `maps_bytes.rs`).
enum PathKind<'a> {
    Anonymous,
    /// `[heap]`, `[stack]`, `[vdso]`: a bracketed name with no inode.
    Special,
    File {
        path: &'a [u8],
        deleted: bool,
    },
}

fn path_kind(path: &[u8], has_inode: bool) -> PathKind<'_> {
    if path.is_empty() {
        return PathKind::Anonymous;
    }
    if !has_inode && path.first() == Some(&b'[') && path.last() == Some(&b']') {
        return PathKind::Special;
    }
    match path.strip_suffix(b" (deleted)") {
        Some(path) => PathKind::File { path, deleted: true },
        None => PathKind::File { path, deleted: false },
    }
}

fn backing(path: &str, has_inode: bool) -> Backing {
    match path_kind(path.as_bytes(), has_inode) {
        PathKind::Anonymous => Backing::Anonymous,
        PathKind::Special => Backing::Special(path.to_string()),
        // A prefix ending before the ASCII " (deleted)", so a char boundary.
        PathKind::File { path: file, deleted } => Backing::File {
            path: path[..file.len()].to_string(),
            deleted,
        },
    }
}

fn hex(text: &str) -> Option<u64> {
    if text.is_empty() || text.len() > 16 {
        return None;
    }
    u64::from_str_radix(text, 16).ok()
}

/// Parses a whole file; blank lines are skipped.
pub fn parse(text: &str) -> Result<Vec<Mapping>, ParseError> {
    text.lines().filter(|l| !l.trim().is_empty()).map(parse_line).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// From `cat /proc/PID/maps` of a python3 process on this project's
    /// development VM (kernel 6.18), which had mmapped a file under a
    /// directory with spaces, an unlinked file, /dev/shm, a memfd and shared
    /// anonymous memory; trimmed to one line of each kind.
    const PYTHON: &str = "\
5562752e0000-5562752e1000 r--p 00000000 fe:00 18504                      /root/.pyenv/versions/3.11.7/bin/python3.11
5562752e4000-5562752e5000 rw-p 00003000 fe:00 18504                      /root/.pyenv/versions/3.11.7/bin/python3.11
55628edb6000-55628ef66000 rw-p 00000000 00:00 0                          [heap]
7f68a4000000-7f68a4021000 rw-p 00000000 00:00 0 
7f68a4021000-7f68a8000000 ---p 00000000 00:00 0 
7f68b24fc000-7f68b24fd000 rw-s 00000000 00:01 1273                       /memfd:capmemfd (deleted)
7f68b24fd000-7f68b24ff000 rw-s 00000000 00:01 1272                       /dev/zero (deleted)
7f68b2570000-7f68b2571000 rw-s 00000000 00:1b 2644673                    /dev/shm/cap-shm
7f68b31ba000-7f68b31bc000 rw-s 00000000 fe:00 10010775                   /tmp/cap dir/my file.bin
7f68b3206000-7f68b3207000 rw-s 00000000 fe:00 10010776                   /tmp/cap-deleted.bin (deleted)
7f68b3214000-7f68b3218000 r--p 00000000 00:00 0                          [vvar]
7f68b321a000-7f68b321c000 r-xp 00000000 00:00 0                          [vdso]
7ffc9c7d7000-7ffc9c7f8000 rw-p 00000000 00:00 0                          [stack]
ffffffffff600000-ffffffffff601000 --xp 00000000 00:00 0                  [vsyscall]
";

    #[test]
    fn real_capture_every_kind() {
        let maps = parse(PYTHON).unwrap();
        assert_eq!(maps.len(), 14);
        let exe = &maps[1];
        assert_eq!((exe.start, exe.end), (0x5562752e4000, 0x5562752e5000));
        assert_eq!(exe.offset_bytes, 0x3000);
        assert_eq!((exe.dev_major, exe.dev_minor, exe.inode), (0xfe, 0, 18504));
        assert!(exe.perms.write && !exe.perms.exec && !exe.perms.shared);
        assert_eq!(exe.perms.to_string(), "rw-p");
        assert_eq!(maps[2].backing, Backing::Special("[heap]".into()));
        assert_eq!(maps[3].backing, Backing::Anonymous);
        assert_eq!(maps[4].perms.to_string(), "---p");
        assert_eq!(
            maps[5].backing,
            Backing::File {
                path: "/memfd:capmemfd".into(),
                deleted: true
            }
        );
        assert!(maps[7].perms.shared);
        assert_eq!(maps[8].backing.path(), Some("/tmp/cap dir/my file.bin"));
        assert_eq!(
            maps[9].backing,
            Backing::File {
                path: "/tmp/cap-deleted.bin".into(),
                deleted: true
            }
        );
        assert_eq!(maps[11].backing, Backing::Special("[vdso]".into()));
        assert_eq!(maps[12].backing, Backing::Special("[stack]".into()));
        assert_eq!(maps[13].end, 0xffffffffff601000);
        assert_eq!(maps[13].len_bytes(), 4096);
    }

    #[test]
    fn a_file_named_like_a_bracket_is_still_a_file() {
        let line = "7f0000000000-7f0000001000 r--p 00000000 fe:00 77 [heap]";
        assert_eq!(
            parse_line(line).unwrap().backing,
            Backing::File {
                path: "[heap]".into(),
                deleted: false
            }
        );
    }

    #[test]
    fn malformed_lines_are_errors() {
        for line in [
            "",
            "5562752e0000 r--p 00000000 fe:00 1 /x",
            "5562752e1000-5562752e0000 r--p 00000000 fe:00 1 /x",
            "5562752e0000-5562752e1000 rq-p 00000000 fe:00 1 /x",
            "5562752e0000-5562752e1000 r--x 00000000 fe:00 1 /x",
            "5562752e0000-5562752e1000 r--p zz fe:00 1 /x",
            "5562752e0000-5562752e1000 r--p 00000000 fe00 1 /x",
            "5562752e0000-5562752e1000 r--p 00000000 fe:00",
            "5562752e0000-5562752e1000 r--p 00000000 fe:00 -1",
            "10000000000000000-10000000000000001 r--p 0 0:0 0",
        ] {
            assert!(parse_line(line).is_err(), "accepted `{line}`");
        }
    }

    #[test]
    fn truncated_capture_fails_on_the_cut_line_only() {
        let cut = &PYTHON[..PYTHON.find("[heap]").unwrap() - 30];
        assert!(parse(cut).is_err());
        assert_eq!(parse(&PYTHON[..PYTHON.find("55628edb6000").unwrap()]).unwrap().len(), 2);
    }

    proptest! {
        #[test]
        fn never_panics(text in "\\PC{0,120}") {
            let _ = parse(&text);
        }

        #[test]
        fn never_panics_on_plausible_lines(
            start in any::<u64>(), len in any::<u32>(), perms in "[r-][w-][x-][ps]",
            offset in any::<u32>(), path in "[ -~]{0,30}",
        ) {
            let line = format!("{start:x}-{:x} {perms} {offset:08x} fe:00 1 {path}", start.saturating_add(len as u64));
            let mapping = parse_line(&line).unwrap();
            prop_assert_eq!(mapping.start, start);
        }
    }
}
