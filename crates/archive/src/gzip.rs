//! The gzip layer of a snapshot archive, checked end to end.
//!
//! gzip's CRC-32 and length trailer are only checked when the stream is
//! read to its end, and `GzDecoder` stops quietly at the end of the first
//! member, so an archive whose tar part ends early (the end-of-archive
//! blocks) could hide a corrupted or truncated tail, or carry anything
//! after it. [`Gzip::finish`] reads to the trailer and refuses trailing
//! bytes.
//!
//! The trailer's CRC covers what is unpacked, not every byte of the file:
//! the header's MTIME, XFL and OS bytes, and deflate's padding bits and
//! redundant code lengths, can change without changing a byte unpacked. So
//! archives we write carry two more checks that gzip readers skip if they
//! do not know them: a header CRC (FHCRC), and the CRC-32 of the compressed
//! bytes in an extra field (subfield `Ns`). Then any flipped bit of our own
//! archives is caught. In others, XFL and OS are checked against the values
//! RFC 1952 allows, which catches some flips there.

use std::fs::File;
use std::io::{self, BufRead, BufReader, Read, Seek, SeekFrom, Write};
use std::os::unix::fs::FileExt;

use flate2::bufread::GzDecoder;
use flate2::write::DeflateEncoder;
use flate2::{Compression, Crc, CrcWriter};

use numasleuth_parse::read::format_cap;

use crate::error::Problem;

/// FLG bits: header CRC and extra field.
const FHCRC: u8 = 0x02;
const FEXTRA: u8 = 0x04;
/// Our extra subfield: `Ns`, 4 bytes of CRC-32 over the compressed body.
const SUBFIELD: [u8; 2] = *b"Ns";
/// Header length when it is exactly ours: 10 fixed bytes, XLEN, the
/// subfield (2 id + 2 length + 4 CRC), the header CRC.
const OUR_HEADER_BYTES: u64 = 10 + 2 + 8 + 2;
/// Where the body CRC sits in our header.
const BODY_CRC_AT: u64 = 16;

/// What a file that is not gzip is, from its first bytes, so the user
/// learns what to do rather than just "bad header".
fn sniff(head: &[u8]) -> Option<&'static str> {
    const XZ: &[u8] = &[0xfd, b'7', b'z', b'X', b'Z', 0];
    if head.starts_with(b"BZh") {
        Some("it is bzip2-compressed; unpack it and pass the directory, or recompress it with gzip")
    } else if head.starts_with(XZ) {
        Some("it is xz-compressed; unpack it and pass the directory, or recompress it with gzip")
    } else if head.starts_with(&[0x28, 0xb5, 0x2f, 0xfd]) {
        Some("it is zstd-compressed; unpack it and pass the directory, or recompress it with gzip")
    } else if head.get(257..262) == Some(b"ustar") {
        Some("it is an uncompressed tar; unpack it and pass the directory, or compress it with gzip")
    } else {
        None
    }
}

/// The raw file, computing the CRC-32 of the bytes in `body` (the
/// compressed data between our header and the trailer) as they pass.
struct RawCrc {
    file: File,
    at: u64,
    body: std::ops::Range<u64>,
    crc: Crc,
}

impl Read for RawCrc {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.file.read(buf)?;
        let (from, to) = (self.at, self.at + n as u64);
        let (lo, hi) = (from.max(self.body.start), to.min(self.body.end));
        if lo < hi {
            self.crc.update(&buf[(lo - from) as usize..(hi - from) as usize]);
        }
        self.at = to;
        Ok(n)
    }
}

/// A decompressed stream that refuses to yield more than its cap
/// ([`crate::limits::MAX_STREAM_BYTES`]).
pub(crate) struct Gzip {
    decoder: GzDecoder<BufReader<RawCrc>>,
    read_bytes: u64,
    cap_bytes: u64,
    /// The compressed bytes' CRC-32 our header promises, if it is ours.
    body_crc: Option<u32>,
}

impl Gzip {
    /// Checks the header of `file`, `file_bytes` long, and starts
    /// decompressing it.
    pub fn open(file: File, file_bytes: u64, cap_bytes: u64) -> Result<Gzip, Problem> {
        let mut head = [0u8; 512];
        let mut got = 0;
        while got < head.len() {
            match file.read_at(&mut head[got..], got as u64) {
                Ok(0) => break,
                Ok(n) => got += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(Problem(format!("cannot read it: {e}"))),
            }
        }
        let head = &head[..got];
        if head.len() < 18 {
            return Err(Problem(
                "it is too short to be a .tar.gz (an empty or cut-off file)".into(),
            ));
        }
        if head[..2] != [0x1f, 0x8b] {
            let what = sniff(head).unwrap_or("it is not gzip-compressed");
            return Err(Problem(what.into()));
        }
        // XFL is 0, 2 or 4 and OS one of RFC 1952's codes (0–13, or 255 for
        // unknown): header bytes no check reads unless FHCRC is set.
        let (xfl, os) = (head[8], head[9]);
        if !matches!(xfl, 0 | 2 | 4) || !(os <= 13 || os == 255) {
            return Err(Problem(format!(
                "corrupt gzip header (XFL {xfl}, OS {os} are not values gzip writes)"
            )));
        }
        // Exactly our layout, or no body CRC (flate2 checks FHCRC itself).
        // Every index goes through `get`: a file cut inside our header
        // (18 or 19 bytes) has the flags but not the CRC, and is then left
        // to the decoder, which reports it truncated.
        let ours = head[3] == FHCRC | FEXTRA
            && head.get(10..12) == Some(&[8, 0])
            && head.get(12..14) == Some(&SUBFIELD)
            && head.get(14..16) == Some(&[4, 0]);
        let body_crc = head
            .get(16..20)
            .filter(|_| ours)
            .map(|crc| u32::from_le_bytes([crc[0], crc[1], crc[2], crc[3]]));
        let body_end = file_bytes.saturating_sub(8).max(OUR_HEADER_BYTES);
        let raw = RawCrc {
            file,
            at: 0,
            body: OUR_HEADER_BYTES..body_end,
            crc: Crc::new(),
        };
        Ok(Gzip {
            decoder: GzDecoder::new(BufReader::with_capacity(64 << 10, raw)),
            read_bytes: 0,
            cap_bytes,
            body_crc,
        })
    }

    /// Reads the rest of the stream (tar pads archives past their end
    /// blocks) so gzip checks its CRC and length, then refuses anything
    /// after the gzip trailer: a second member or appended bytes.
    pub fn finish(mut self) -> Result<(), Problem> {
        io::copy(&mut self, &mut io::sink()).map_err(Problem::stream)?;
        let reader = self.decoder.get_mut();
        let rest = reader.fill_buf().map_err(|e| Problem(format!("cannot read it: {e}")))?;
        if !rest.is_empty() {
            return Err(Problem(
                "it has data after the end of the gzip stream (appended or corrupted)".into(),
            ));
        }
        if let Some(expected) = self.body_crc {
            if reader.get_ref().crc.sum() != expected {
                return Err(Problem(
                    "corrupt gzip data: the compressed bytes do not match their checksum".into(),
                ));
            }
        }
        Ok(())
    }
}

impl Read for Gzip {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let left = self.cap_bytes + 1 - self.read_bytes;
        let want = buf.len().min(usize::try_from(left).unwrap_or(usize::MAX));
        let n = self.decoder.read(&mut buf[..want])?;
        self.read_bytes += n as u64;
        if self.read_bytes > self.cap_bytes {
            return Err(io::Error::other(format!(
                "it decompresses to more than {}; no snapshot is that big",
                format_cap(self.cap_bytes)
            )));
        }
        Ok(n)
    }
}

/// A gzip writer for our own archives: a header with its own CRC (FHCRC)
/// and the CRC-32 of the compressed bytes in an extra field, so no bit of
/// the file goes unchecked when it is read back. flate2's `GzEncoder` can
/// write neither, so the header and trailer are written here around a raw
/// deflate stream, and the body CRC is filled in at the end.
pub(crate) struct GzipWriter {
    body: CrcWriter<DeflateEncoder<CrcWriter<File>>>,
}

impl GzipWriter {
    pub fn new(mut file: File) -> io::Result<Self> {
        // ID1 ID2, CM deflate, FLG, MTIME 0 (reproducible), XFL 0, OS 3
        // (Unix); XLEN 8; subfield `Ns`, length 4, CRC-32 (for now 0); and
        // the header CRC, written in `finish` once the header is complete.
        let mut header = vec![0x1f, 0x8b, 8, FHCRC | FEXTRA, 0, 0, 0, 0, 0, 3, 8, 0];
        header.extend(SUBFIELD);
        header.extend([4, 0, 0, 0, 0, 0, 0, 0]);
        debug_assert_eq!(header.len() as u64, OUR_HEADER_BYTES);
        file.write_all(&header)?;
        Ok(GzipWriter {
            body: CrcWriter::new(DeflateEncoder::new(CrcWriter::new(file), Compression::default())),
        })
    }

    /// Ends the deflate stream, writes the trailer, and fills in the body
    /// CRC and then the header CRC.
    pub fn finish(self) -> io::Result<File> {
        let (sum, amount) = (self.body.crc().sum(), self.body.crc().amount());
        let compressed = self.body.into_inner().finish()?;
        let body_crc = compressed.crc().sum();
        let mut file = compressed.into_inner();
        file.write_all(&sum.to_le_bytes())?;
        file.write_all(&amount.to_le_bytes())?;
        file.write_all_at(&body_crc.to_le_bytes(), BODY_CRC_AT)?;
        let mut header = [0u8; OUR_HEADER_BYTES as usize - 2];
        file.read_exact_at(&mut header, 0)?;
        let mut crc = Crc::new();
        crc.update(&header);
        file.write_all_at(&(crc.sum() as u16).to_le_bytes(), OUR_HEADER_BYTES - 2)?;
        file.seek(SeekFrom::End(0))?;
        Ok(file)
    }
}

impl Write for GzipWriter {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.body.write(buf)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.body.flush()
    }
}
