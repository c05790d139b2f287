//! Listing a tree root's directory from the descriptor [`crate::tree_dirs`]
//! already holds, with `getdents64`: `read_dir` by path would walk the
//! whole path again and open and close the directory once more, for each of
//! the two directories every CPU lists (its own and its `cache/`).

use std::io;
use std::os::fd::RawFd;

/// Bytes asked of each `getdents64`: a CPU's directory fits in one call.
const DIRENT_BUFFER_BYTES: usize = 32 << 10;

/// Offset of `d_name` in `struct linux_dirent64`: inode (8), offset (8),
/// record length (2), type (1).
const NAME_OFFSET: usize = 19;

/// The names in the directory open at `fd` (read from its current
/// position to its end), without `.`, `..` and `skip`. Stops once it holds
/// more than `cap` names, so a hostile directory cannot fill memory; the
/// caller refuses such a list. `buffer` is the caller's, kept between
/// listings: zeroing 32 KiB for each of the ~260 directories a 128-CPU
/// tree lists was 1% of `topo`.
pub(crate) fn names(fd: RawFd, skip: &str, cap: usize, buffer: &mut Vec<u8>) -> io::Result<Vec<String>> {
    if buffer.len() < DIRENT_BUFFER_BYTES {
        buffer.resize(DIRENT_BUFFER_BYTES, 0);
    }
    let mut names = Vec::new();
    loop {
        // SAFETY: a valid descriptor and a buffer of the length given.
        let got = unsafe { libc::syscall(libc::SYS_getdents64, fd, buffer.as_mut_ptr(), buffer.len()) };
        if got < 0 {
            let error = io::Error::last_os_error();
            if error.kind() == io::ErrorKind::Interrupted {
                continue;
            }
            return Err(error);
        }
        if got == 0 {
            return Ok(names);
        }
        parse_records(&buffer[..got as usize], skip, cap, &mut names)?;
        if names.len() > cap {
            return Ok(names);
        }
    }
}

/// Appends the names of the records in `records`, a `getdents64` answer.
fn parse_records(mut records: &[u8], skip: &str, cap: usize, names: &mut Vec<String>) -> io::Result<()> {
    while !records.is_empty() {
        let length = records
            .get(16..18)
            .map(|b| usize::from(u16::from_ne_bytes([b[0], b[1]])))
            .filter(|&length| length > NAME_OFFSET && length <= records.len())
            .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidData, "a malformed directory record"))?;
        let name = &records[NAME_OFFSET..length];
        let name = &name[..name.iter().position(|&b| b == 0).unwrap_or(name.len())];
        records = &records[length..];
        if name == b"." || name == b".." || name == skip.as_bytes() {
            continue;
        }
        names.push(String::from_utf8_lossy(name).into_owned());
        if names.len() > cap {
            break;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::fd::AsRawFd;

    fn record(name: &str) -> Vec<u8> {
        let length = (NAME_OFFSET + name.len() + 1).next_multiple_of(8);
        let mut bytes = vec![0u8; length];
        bytes[16..18].copy_from_slice(&(length as u16).to_ne_bytes());
        bytes[NAME_OFFSET..NAME_OFFSET + name.len()].copy_from_slice(name.as_bytes());
        bytes
    }

    #[test]
    fn lists_what_read_dir_lists() {
        let dir = tempfile::tempdir().unwrap();
        for name in ["a", "b\u{1b}c", ".keep", "nested"] {
            std::fs::write(dir.path().join(name), "").unwrap();
        }
        let fd = std::fs::File::open(dir.path()).unwrap();
        let mut got = names(fd.as_raw_fd(), ".keep", 100, &mut Vec::new()).unwrap();
        got.sort();
        assert_eq!(got, ["a", "b\u{1b}c", "nested"]);
    }

    #[test]
    fn stops_past_the_cap() {
        let bytes: Vec<u8> = ["x", "y", "z"].iter().flat_map(|n| record(n)).collect();
        let mut got = Vec::new();
        parse_records(&bytes, "", 1, &mut got).unwrap();
        assert_eq!(got, ["x", "y"]);
    }

    #[test]
    fn a_record_longer_than_the_answer_is_refused() {
        let mut bytes = record("x");
        bytes.truncate(20);
        assert!(parse_records(&bytes, "", 10, &mut Vec::new()).is_err());
        let mut short = record("x");
        short[16..18].copy_from_slice(&4u16.to_ne_bytes());
        assert!(parse_records(&short, "", 10, &mut Vec::new()).is_err());
    }
}
