//! A minimal tar reader for snapshot archives: ustar, GNU and pax headers,
//! and only the entry kinds a snapshot holds (files, directories, symbolic
//! links).
//!
//! Our own, rather than the `tar` crate's, because an archive is hostile
//! input: that crate reads GNU long names and pax headers whole into memory
//! before anyone can look at their size (a 1.5 MB archive reached 6 GB),
//! and expands sparse maps. Here every header's size is checked against a
//! small cap before a byte of it is read, so memory stays bounded by the
//! caps however the archive is built.

use std::io::{self, Read, Write};

use numasleuth_parse::error::quote;
use numasleuth_parse::read::format_cap;

use crate::error::Problem;
use crate::limits::{MAX_ENTRY_BYTES, MAX_EXTENSION_HEADERS, MAX_LONG_NAME_BYTES, MAX_PAX_BYTES};

const BLOCK: usize = 512;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    File,
    Dir,
    Symlink,
}

/// One entry with its extension headers applied; paths are raw bytes, not
/// yet checked (see `extract`).
#[derive(Debug)]
pub(crate) struct Entry {
    pub path: Vec<u8>,
    pub link: Vec<u8>,
    pub kind: Kind,
    pub size: u64,
}

pub(crate) struct TarReader<R> {
    inner: R,
    /// Data and padding bytes of the current entry not yet consumed.
    pending: u64,
    finished: bool,
}

impl<R: Read> TarReader<R> {
    pub fn new(inner: R) -> Self {
        TarReader {
            inner,
            pending: 0,
            finished: false,
        }
    }

    pub fn into_inner(self) -> R {
        self.inner
    }

    /// The next entry, or `None` at the end-of-archive block (or a clean
    /// end of stream on a block boundary, as `tar` itself accepts).
    pub fn next_entry(&mut self) -> Result<Option<Entry>, Problem> {
        self.skip_pending()?;
        let mut long_name: Option<Vec<u8>> = None;
        let mut long_link: Option<Vec<u8>> = None;
        let mut pax = Pax::default();
        for _ in 0..=MAX_EXTENSION_HEADERS {
            let Some(block) = self.read_header()? else {
                return Ok(None);
            };
            let size = numeric(&block[124..136]).ok_or_else(|| Problem::new("header has a bad size field"))?;
            let kind = block[156];
            match kind {
                b'L' | b'K' => {
                    let what = if kind == b'L' { "long name" } else { "long link name" };
                    let mut data = self.read_extension(size, MAX_LONG_NAME_BYTES + 1, what)?;
                    while data.last() == Some(&0) {
                        data.pop();
                    }
                    *(if kind == b'L' { &mut long_name } else { &mut long_link }) = Some(data);
                }
                b'x' => pax = Pax::parse(&self.read_extension(size, MAX_PAX_BYTES, "pax header")?)?,
                // Global pax defaults (a comment, a charset): nothing we use.
                b'g' => drop(self.read_extension(size, MAX_PAX_BYTES, "global pax header")?),
                _ => {
                    let size = pax.size.unwrap_or(size);
                    let entry_kind = entry_kind(kind)?;
                    let path = pax
                        .path
                        .take()
                        .or(long_name.take())
                        .unwrap_or_else(|| header_path(&block));
                    if size > MAX_ENTRY_BYTES {
                        return Err(Problem(format!(
                            "`{}` is {size} bytes, more than any kernel file ({})",
                            quote(&String::from_utf8_lossy(&path)),
                            format_cap(MAX_ENTRY_BYTES)
                        )));
                    }
                    // A directory or link with data is odd but harmless:
                    // its data is skipped, within the stream's cap.
                    self.pending = padded(size);
                    let link = pax
                        .link
                        .take()
                        .or(long_link.take())
                        .unwrap_or_else(|| field(&block[157..257]));
                    return Ok(Some(Entry {
                        path,
                        link,
                        kind: entry_kind,
                        size: if entry_kind == Kind::File { size } else { 0 },
                    }));
                }
            }
        }
        Err(Problem(format!(
            "more than {MAX_EXTENSION_HEADERS} extension headers in a row"
        )))
    }

    /// Copies the current file entry's `size` bytes to `out`, telling a
    /// bad archive (reading) from a full disk (writing).
    pub fn copy_data(&mut self, size: u64, out: &mut impl Write) -> Result<(), Problem> {
        let mut buffer = [0u8; 8192];
        let mut left = size;
        while left > 0 {
            let want = buffer.len().min(left as usize);
            let n = match self.inner.read(&mut buffer[..want]) {
                Ok(0) => return Err(Problem::new("truncated: the archive ends in the middle of a file")),
                Ok(n) => n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(Problem::stream(e)),
            };
            out.write_all(&buffer[..n])
                .map_err(|e| Problem(format!("cannot unpack: {e}")))?;
            left -= n as u64;
        }
        self.pending -= size;
        Ok(())
    }

    fn skip_pending(&mut self) -> Result<(), Problem> {
        let skipped = io::copy(&mut (&mut self.inner).take(self.pending), &mut io::sink()).map_err(Problem::stream)?;
        if skipped < self.pending {
            return Err(Problem::new("truncated: the archive ends in the middle of an entry"));
        }
        self.pending = 0;
        Ok(())
    }

    fn read_header(&mut self) -> Result<Option<[u8; BLOCK]>, Problem> {
        if self.finished {
            return Ok(None);
        }
        let mut block = [0u8; BLOCK];
        let mut filled = 0;
        while filled < BLOCK {
            match self.inner.read(&mut block[filled..]) {
                Ok(0) if filled == 0 => {
                    self.finished = true;
                    return Ok(None);
                }
                Ok(0) => return Err(Problem::new("truncated: the archive ends inside a header")),
                Ok(n) => filled += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(Problem::stream(e)),
            }
        }
        if block.iter().all(|b| *b == 0) {
            self.finished = true;
            return Ok(None);
        }
        check_sum(&block)?;
        Ok(Some(block))
    }

    /// Reads an extension header's payload after checking its size.
    fn read_extension(&mut self, size: u64, limit: u64, what: &str) -> Result<Vec<u8>, Problem> {
        if size > limit {
            return Err(Problem(format!("a {what} of {size} bytes (the limit is {limit})")));
        }
        let mut data = vec![0; size as usize];
        self.inner.read_exact(&mut data).map_err(Problem::stream)?;
        self.pending = padded(size) - size;
        self.skip_pending()?;
        Ok(data)
    }
}

fn padded(size: u64) -> u64 {
    size.div_ceil(BLOCK as u64) * BLOCK as u64
}

fn entry_kind(flag: u8) -> Result<Kind, Problem> {
    let refuse = |what: &str| {
        Err(Problem(format!(
            "holds {what}; a snapshot holds only files, directories and symbolic links"
        )))
    };
    match flag {
        b'0' | 0 | b'7' => Ok(Kind::File),
        b'5' => Ok(Kind::Dir),
        b'2' => Ok(Kind::Symlink),
        b'1' => refuse("a hard link"),
        b'3' => refuse("a character device"),
        b'4' => refuse("a block device"),
        b'6' => refuse("a FIFO"),
        b'S' => refuse("a sparse file"),
        other => refuse(&format!(
            "an entry of unknown type `{}`",
            quote(&char::from(other).to_string())
        )),
    }
}

/// The header checksum: the sum of all bytes with the checksum field taken
/// as spaces. Old tars summed signed bytes, so either sum is accepted.
fn check_sum(block: &[u8; BLOCK]) -> Result<(), Problem> {
    let stored = numeric(&block[148..156]);
    let (mut unsigned, mut signed) = (0u64, 0i64);
    for (i, b) in block.iter().enumerate() {
        let (u, s) = if (148..156).contains(&i) {
            (32, 32)
        } else {
            (u64::from(*b), i64::from(*b as i8))
        };
        unsigned += u;
        signed += s;
    }
    match stored {
        Some(sum) if sum == unsigned || i64::try_from(sum).is_ok_and(|s| s == signed) => Ok(()),
        _ => Err(Problem::new(
            "a tar header's checksum does not match: not a tar archive, or a corrupted one",
        )),
    }
}

/// A NUL-terminated header field.
fn field(bytes: &[u8]) -> Vec<u8> {
    let end = bytes.iter().position(|b| *b == 0).unwrap_or(bytes.len());
    bytes[..end].to_vec()
}

/// `prefix/name` for POSIX ustar headers; GNU headers use the prefix bytes
/// for other things, and v7 headers have none.
fn header_path(block: &[u8; BLOCK]) -> Vec<u8> {
    let name = field(&block[0..100]);
    if &block[257..263] != b"ustar\0" {
        return name;
    }
    let prefix = field(&block[345..500]);
    if prefix.is_empty() {
        return name;
    }
    let mut path = prefix;
    path.push(b'/');
    path.extend(name);
    path
}

/// An octal number field (NUL- or space-terminated), or GNU base-256 when
/// the high bit of the first byte is set. `None` for garbage or a value
/// that does not fit in 64 bits.
fn numeric(bytes: &[u8]) -> Option<u64> {
    if bytes.first().is_some_and(|b| b & 0x80 != 0) {
        if bytes[0] & 0x40 != 0 {
            return None; // negative
        }
        let mut value: u64 = u64::from(bytes[0] & 0x3f);
        for b in &bytes[1..] {
            value = value.checked_mul(256)?.checked_add(u64::from(*b))?;
        }
        return Some(value);
    }
    let text = bytes.iter().skip_while(|b| **b == b' ' || **b == 0);
    let mut value: u64 = 0;
    let mut digits = 0;
    for b in text {
        match b {
            b'0'..=b'7' => {
                value = value.checked_mul(8)?.checked_add(u64::from(b - b'0'))?;
                digits += 1;
            }
            b' ' | 0 => break,
            _ => return None,
        }
    }
    (digits > 0 || bytes.iter().all(|b| *b == b' ' || *b == 0)).then_some(value)
}

/// The pax keys a snapshot needs; the rest (times, owners, xattrs) are
/// ignored, as extraction ignores modes and owners too.
#[derive(Debug, Default)]
struct Pax {
    path: Option<Vec<u8>>,
    link: Option<Vec<u8>>,
    size: Option<u64>,
}

impl Pax {
    /// Records are `LEN KEY=VALUE\n`, LEN counting the whole record.
    fn parse(data: &[u8]) -> Result<Self, Problem> {
        let bad = || Problem::new("a pax header record is malformed");
        let mut pax = Pax::default();
        let mut rest = data;
        while !rest.is_empty() {
            // Some writers pad the payload with NULs.
            if rest.iter().all(|b| *b == 0) {
                break;
            }
            let space = rest.iter().position(|b| *b == b' ').ok_or_else(bad)?;
            let len: usize = std::str::from_utf8(&rest[..space])
                .ok()
                .and_then(|t| t.parse().ok())
                .filter(|len| *len > space + 1 && *len <= rest.len())
                .ok_or_else(bad)?;
            let record = &rest[space + 1..len];
            rest = &rest[len..];
            let record = record.strip_suffix(b"\n").ok_or_else(bad)?;
            let equals = record.iter().position(|b| *b == b'=').ok_or_else(bad)?;
            let (key, value) = (&record[..equals], &record[equals + 1..]);
            match key {
                b"path" => pax.path = Some(value.to_vec()),
                b"linkpath" => pax.link = Some(value.to_vec()),
                b"size" => {
                    let size = std::str::from_utf8(value).ok().and_then(|t| t.parse().ok());
                    pax.size = Some(size.ok_or_else(|| Problem::new("a pax size is not a number"))?);
                }
                k if k.starts_with(b"GNU.sparse.") => {
                    return Err(Problem::new(
                        "holds a sparse file; a snapshot holds only files, directories and symbolic links",
                    ))
                }
                _ => {}
            }
        }
        Ok(pax)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_in_octal_and_base_256() {
        assert_eq!(numeric(b"00000000644\0"), Some(0o644));
        assert_eq!(numeric(b"     17 "), Some(0o17));
        assert_eq!(numeric(b"\0\0\0\0"), Some(0));
        assert_eq!(numeric(&[0x80, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0]), Some(1 << 32));
        assert_eq!(numeric(&[0xff; 12]), None);
        assert_eq!(
            numeric(&[0x80, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 1, 2, 3]),
            None
        );
        assert_eq!(numeric(b"0009\0"), None);
        assert_eq!(numeric(b"7777777777777777777777777"), None);
    }

    #[test]
    fn pax_records() {
        let pax = Pax::parse(b"30 mtime=1700000000.123456789\n12 path=a/b\n12 size=123\n").unwrap();
        assert_eq!(pax.path.as_deref(), Some(&b"a/b"[..]));
        assert_eq!(pax.size, Some(123));
        for bad in [&b"99 path=x\n"[..], b"abc", b"6 p=x\n7 x", b"8 pathx\n", b"1 \n"] {
            assert!(Pax::parse(bad).is_err(), "{:?}", String::from_utf8_lossy(bad));
        }
        assert!(Pax::parse(b"22 GNU.sparse.major=1\n").is_err());
    }
}
