//! Byte-level tar and gzip writing for tests, so hostile archives (`..`,
//! absolute paths, huge extension headers, FIFOs) can be made in the test
//! itself: the `tar` crate refuses to write most of them, and committing
//! binary fixtures would hide what they hold.

use std::io::Write;

/// A tar stream built header by header, with no checks at all.
#[derive(Debug, Default)]
pub struct TarBuilder {
    pub bytes: Vec<u8>,
}

/// Octal, NUL-terminated, filling `field`; base-256 when it does not fit.
fn number(field: &mut [u8], value: u64) {
    let digits = field.len() - 1;
    let text = format!("{value:0digits$o}");
    if text.len() <= digits {
        field[..digits].copy_from_slice(text.as_bytes());
        field[digits] = 0;
    } else {
        field.fill(0);
        field[0] = 0x80;
        let len = field.len();
        for (i, byte) in value.to_be_bytes().iter().enumerate() {
            field[len - 8 + i] = *byte;
        }
    }
}

impl TarBuilder {
    pub fn new() -> Self {
        TarBuilder { bytes: Vec::new() }
    }

    /// One POSIX ustar header; `name` and `link` are cut to their fields.
    pub fn header(&mut self, name: &[u8], kind: u8, size: u64, link: &[u8]) -> &mut Self {
        let mut block = [0u8; 512];
        let name = &name[..name.len().min(100)];
        block[..name.len()].copy_from_slice(name);
        number(&mut block[100..108], 0o755);
        number(&mut block[108..116], 0);
        number(&mut block[116..124], 0);
        number(&mut block[124..136], size);
        number(&mut block[136..148], 0);
        block[156] = kind;
        let link = &link[..link.len().min(100)];
        block[157..157 + link.len()].copy_from_slice(link);
        block[257..263].copy_from_slice(b"ustar\0");
        block[263..265].copy_from_slice(b"00");
        block[148..156].fill(b' ');
        let sum: u64 = block.iter().map(|b| u64::from(*b)).sum();
        number(&mut block[148..155], sum);
        block[155] = b' ';
        self.bytes.extend_from_slice(&block);
        self
    }

    /// Data padded to a whole block.
    pub fn data(&mut self, data: &[u8]) -> &mut Self {
        self.bytes.extend_from_slice(data);
        let pad = (512 - data.len() % 512) % 512;
        self.bytes.extend(std::iter::repeat_n(0, pad));
        self
    }

    /// A GNU long-name header when the name does not fit, then the entry.
    fn named(&mut self, name: &[u8], kind: u8, size: u64, link: &[u8]) -> &mut Self {
        if name.len() > 100 {
            self.header(b"././@LongLink", b'L', name.len() as u64 + 1, b"");
            self.data(&[name, b"\0"].concat());
        }
        if link.len() > 100 {
            self.header(b"././@LongLink", b'K', link.len() as u64 + 1, b"");
            self.data(&[link, b"\0"].concat());
        }
        self.header(name, kind, size, link)
    }

    pub fn file(&mut self, name: &str, data: &[u8]) -> &mut Self {
        self.named(name.as_bytes(), b'0', data.len() as u64, b"").data(data)
    }

    pub fn dir(&mut self, name: &str) -> &mut Self {
        self.named(name.as_bytes(), b'5', 0, b"")
    }

    pub fn symlink(&mut self, name: &str, target: &str) -> &mut Self {
        self.named(name.as_bytes(), b'2', 0, target.as_bytes())
    }

    /// A pax extended header holding `records` (`key`, `value`).
    pub fn pax(&mut self, records: &[(&str, &[u8])]) -> &mut Self {
        let mut payload = Vec::new();
        for (key, value) in records {
            let body = [key.as_bytes(), b"=", value, b"\n"].concat();
            // LEN counts itself: find the length that is self-consistent.
            let mut len = body.len() + 2;
            while format!("{len} ").len() + body.len() != len {
                len += 1;
            }
            payload.extend(format!("{len} ").as_bytes());
            payload.extend(body);
        }
        self.header(b"././@PaxHeader", b'x', payload.len() as u64, b"");
        self.data(&payload)
    }

    /// The minimum a root needs: a `sys/` directory.
    pub fn machine(&mut self) -> &mut Self {
        self.dir("sys").file("sys/online", b"0\n")
    }

    /// The two zero blocks that end an archive.
    pub fn tar(&mut self) -> Vec<u8> {
        let mut bytes = self.bytes.clone();
        bytes.extend([0u8; 1024]);
        bytes
    }

    pub fn gz(&mut self) -> Vec<u8> {
        gzip(&self.tar())
    }
}

/// `bytes` gzipped as any gzip writer would (no extra checks of ours).
pub fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    encoder.write_all(bytes).unwrap();
    encoder.finish().unwrap()
}
