//! A minimal writer for the "newc" cpio format the Linux kernel unpacks as
//! an initramfs.
//!
//! Why write it ourselves instead of running `busybox cpio`: we need a
//! `/dev/console` character device in the archive (the kernel opens it for
//! `/init` before anything can mount devtmpfs), and creating device nodes on
//! disk would need root. Building the archive in memory needs nothing.

use std::io::{self, Write};

const S_IFDIR: u32 = 0o040000;
const S_IFREG: u32 = 0o100000;
const S_IFLNK: u32 = 0o120000;
const S_IFCHR: u32 = 0o020000;

/// Streams newc entries into any writer (typically a gzip encoder).
pub struct CpioWriter<W: Write> {
    out: W,
    next_ino: u32,
    /// Bytes written so far, to compute the 4-byte alignment padding.
    offset: u64,
}

impl<W: Write> CpioWriter<W> {
    pub fn new(out: W) -> Self {
        // Inode 0 is avoided: some unpackers treat it specially.
        CpioWriter {
            out,
            next_ino: 1,
            offset: 0,
        }
    }

    pub fn dir(&mut self, path: &str, perm: u32) -> io::Result<()> {
        self.entry(path, S_IFDIR | perm, 2, (0, 0), &[])
    }

    pub fn file(&mut self, path: &str, perm: u32, data: &[u8]) -> io::Result<()> {
        self.entry(path, S_IFREG | perm, 1, (0, 0), data)
    }

    pub fn symlink(&mut self, path: &str, target: &str) -> io::Result<()> {
        self.entry(path, S_IFLNK | 0o777, 1, (0, 0), target.as_bytes())
    }

    pub fn char_dev(&mut self, path: &str, perm: u32, major: u32, minor: u32) -> io::Result<()> {
        self.entry(path, S_IFCHR | perm, 1, (major, minor), &[])
    }

    /// Writes the trailer entry and returns the inner writer.
    pub fn finish(mut self) -> io::Result<W> {
        self.entry("TRAILER!!!", 0, 1, (0, 0), &[])?;
        Ok(self.out)
    }

    fn entry(&mut self, path: &str, mode: u32, nlink: u32, rdev: (u32, u32), data: &[u8]) -> io::Result<()> {
        // The kernel wants names relative to the root, without a leading '/'.
        let name = path.trim_start_matches('/');
        let ino = self.next_ino;
        self.next_ino += 1;
        let size = u32::try_from(data.len())
            .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "cpio entry over 4 GiB"))?;
        let fields: [u32; 13] = [
            ino,
            mode,
            0, // uid: root
            0, // gid: root
            nlink,
            0, // mtime: fixed, so images are reproducible
            size,
            0, // devmajor of the containing filesystem: irrelevant here
            0,
            rdev.0,
            rdev.1,
            name.len() as u32 + 1, // includes the terminating NUL
            0,                     // checksum: only used by the "070702" variant
        ];
        let mut header = String::with_capacity(110);
        header.push_str("070701");
        for f in fields {
            header.push_str(&format!("{f:08X}"));
        }
        self.write_raw(header.as_bytes())?;
        self.write_raw(name.as_bytes())?;
        self.write_raw(&[0])?;
        self.pad()?;
        self.write_raw(data)?;
        self.pad()
    }

    fn write_raw(&mut self, bytes: &[u8]) -> io::Result<()> {
        self.out.write_all(bytes)?;
        self.offset += bytes.len() as u64;
        Ok(())
    }

    fn pad(&mut self) -> io::Result<()> {
        let rem = (self.offset % 4) as usize;
        if rem != 0 {
            self.write_raw(&[0u8; 3][..4 - rem])?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_fields_and_alignment() {
        let mut w = CpioWriter::new(Vec::new());
        w.file("/init", 0o755, b"hi").unwrap();
        let out = w.finish().unwrap();
        // 110-byte header + "init\0" (5) = 115, padded to 116; data 2 padded to 4.
        assert_eq!(&out[..6], b"070701");
        assert_eq!(&out[110..115], b"init\0");
        assert_eq!(&out[116..118], b"hi");
        assert_eq!(out.len() % 4, 0);
        // The file size field is the 7th 8-hex-digit field.
        assert_eq!(&out[6 + 6 * 8..6 + 7 * 8], b"00000002");
        let trailer = out.windows(10).position(|w| w == b"TRAILER!!!");
        assert_eq!(trailer, Some(120 + 110));
    }

    #[test]
    fn device_numbers_are_recorded() {
        let mut w = CpioWriter::new(Vec::new());
        w.char_dev("dev/console", 0o600, 5, 1).unwrap();
        let out = w.finish().unwrap();
        let field = |i: usize| &out[6 + i * 8..6 + (i + 1) * 8];
        assert_eq!(field(1), b"00002180"); // S_IFCHR | 0600
        assert_eq!(field(9), b"00000005");
        assert_eq!(field(10), b"00000001");
    }
}
