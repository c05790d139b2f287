//! Reading `procfs::pagemap`; its format, types and parser are `numasleuth_parse::procfs::pagemap`.

pub use numasleuth_parse::procfs::pagemap::*;

use crate::error::{display_path, ReadError};
use crate::root::Root;
use std::fs::File;
use std::os::unix::fs::FileExt;

/// Entries read per `pread`: bounds our buffer, not the answer.
const ENTRIES_PER_READ: usize = 512;

/// The entry of each page holding `addresses` (any address inside a page
/// names it). Consecutive pages are read together.
pub fn read(root: &Root, pid: u32, addresses: &[u64], page_bytes: u64) -> Result<Vec<PagemapEntry>, ReadError> {
    let relative = format!("proc/{pid}/pagemap");
    let resolved = root.resolve(&relative)?;
    let path = root.base().join(&resolved);
    let meta = std::fs::metadata(&path).map_err(|e| ReadError::from_io(&relative, &e))?;
    // /proc files are regular files; anything else (a FIFO planted in a
    // fixture tree) could block or mislead.
    if !meta.is_file() {
        return Err(ReadError::Io {
            errno: None,
            path: display_path(&relative),
            message: "not a regular file".into(),
        });
    }
    let file = File::open(&path).map_err(|e| ReadError::from_io(&relative, &e))?;
    let page = page_bytes.max(1);
    let mut out = Vec::with_capacity(addresses.len());
    let mut i = 0;
    while i < addresses.len() {
        // A run of consecutive pages, at most ENTRIES_PER_READ long.
        let first = addresses[i] / page;
        let mut n = 1;
        while i + n < addresses.len() && n < ENTRIES_PER_READ && addresses[i + n] / page == first + n as u64 {
            n += 1;
        }
        let mut buf = vec![0u8; n * ENTRY_BYTES as usize];
        let offset = first.saturating_mul(ENTRY_BYTES);
        let got = read_at_full(&file, &mut buf, offset).map_err(|e| ReadError::from_io(&relative, &e))?;
        if got < buf.len() {
            // Past the end of the address space: no entry, nothing there.
            buf[got..].fill(0);
        }
        out.extend(parse(&buf));
        i += n;
    }
    Ok(out)
}

fn read_at_full(file: &File, buf: &mut [u8], offset: u64) -> std::io::Result<usize> {
    let mut done = 0;
    while done < buf.len() {
        match file.read_at(&mut buf[done..], offset + done as u64) {
            Ok(0) => break,
            Ok(n) => done += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        }
    }
    Ok(done)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Entries read from /proc/PID/pagemap on the development VM (kernel
    /// 6.18) and in the QEMU 6.1 guest, bits 63..55 shown in hex as `>> 55`:
    /// 0x102 written anonymous page, 0x100 the zero page, 0x140 a file page,
    /// 0x103 (6.1 guest) a .bss page marked PROT_NONE by the NUMA-balancing
    /// scanner, which move_pages called -ENOENT; 0 never touched.
    #[test]
    fn real_flag_patterns() {
        let e = |top: u64| parse_entry(top << 55);
        assert_eq!(
            e(0x102),
            PagemapEntry {
                present: true,
                exclusive: true,
                ..Default::default()
            }
        );
        assert!(e(0x100).present && !e(0x100).exclusive);
        assert!(e(0x140).present && e(0x140).file_or_shared_anon);
        assert!(e(0x103).present);
        assert!(e(0).is_empty());
        // A swap entry: bit 62 plus swap type/offset in the low bits.
        let swapped = parse_entry(SWAPPED | 0x1234);
        assert!(swapped.swapped && !swapped.present && !swapped.is_empty());
    }

    #[test]
    fn bytes_decode_in_host_order_and_ignore_a_partial_entry() {
        let mut bytes = (PRESENT | 0x42).to_ne_bytes().to_vec();
        bytes.extend(0u64.to_ne_bytes());
        bytes.extend([0xff; 5]);
        let entries = parse(&bytes);
        assert_eq!(entries.len(), 2);
        assert!(entries[0].present && entries[1].is_empty());
    }

    #[test]
    fn own_pages_live() {
        let page = crate::pages::page_size_bytes();
        let mut touched = vec![0u8; page as usize * 3];
        touched[page as usize] = 1;
        let written = touched.as_ptr() as u64 + page;
        let root = Root::live();
        let pid = std::process::id();
        let entries = read(&root, pid, &[written, written + page / 2], page).unwrap();
        assert_eq!(entries.len(), 2);
        assert!(entries[0].present && entries[1].present, "{entries:?}");
        // SAFETY: an anonymous private mapping we unmap ourselves below.
        let fresh = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                page as usize,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        assert_ne!(fresh, libc::MAP_FAILED);
        assert!(read(&root, pid, &[fresh as u64], page).unwrap()[0].is_empty());
        // SAFETY: unmapping the mapping made above.
        unsafe { libc::munmap(fresh, page as usize) };
        drop(touched);
    }

    #[test]
    fn runs_and_gaps_from_a_fixture_file() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("proc/7")).unwrap();
        // Pages 1 and 2 present, page 4 swapped; the file ends after page 4.
        let mut bytes = Vec::new();
        for raw in [0, PRESENT, PRESENT | EXCLUSIVE, 0, SWAPPED] {
            bytes.extend(u64::to_ne_bytes(raw));
        }
        std::fs::write(dir.path().join("proc/7/pagemap"), bytes).unwrap();
        let root = Root::directory(dir.path()).unwrap();
        let got = read(&root, 7, &[0x1000, 0x2fff, 0x4000, 0x9000], 4096).unwrap();
        let flags: Vec<(bool, bool)> = got.iter().map(|e| (e.present, e.swapped)).collect();
        assert_eq!(flags, [(true, false), (true, false), (false, true), (false, false)]);
        assert!(got[1].exclusive);
    }

    #[test]
    fn a_process_that_does_not_exist_is_not_found() {
        let err = read(&Root::live(), i32::MAX as u32, &[0x1000], 4096).unwrap_err();
        assert!(err.is_not_found(), "{err}");
    }

    #[test]
    fn a_fifo_in_a_fixture_tree_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("proc/7")).unwrap();
        let fifo = dir.path().join("proc/7/pagemap");
        let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        // SAFETY: a valid NUL-terminated path; mkfifo only creates a node.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        let root = Root::directory(dir.path()).unwrap();
        let err = read(&root, 7, &[0x1000], 4096).unwrap_err();
        assert!(err.to_string().contains("not a regular file"), "{err}");
    }
}
