//! What an ELF file may make us read. The file given to `lines`, or mapped
//! by a process `inspect` looks at, may be anything: a FIFO that blocks the
//! open, a device, a sparse file of terabytes, or an ELF whose headers
//! claim billions of sections or symbols so that the parser allocates for
//! them. So the file is opened without blocking and checked to be a regular
//! file (as every kernel file is, see `numasleuth_kernel::untrusted`), its
//! size is capped, its header tables are checked before `object` reads
//! them, and what we keep from it (symbols, DWARF) is capped too.

use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::Path;

use numasleuth_kernel::untrusted::{self, format_cap};

use crate::error::SymbolError;

/// The largest ELF file read. Executables and shared objects are at most a
/// few hundred MB; with full debug info the biggest real ones (Chromium,
/// LLVM debug builds) reach 2–3 GB. Reads are on demand, but what is read
/// is cached, so this is also the bound on the memory one file can cost.
pub const MAX_ELF_BYTES: u64 = 4 << 30;

/// Section headers. Linked programs have tens; objects built with one
/// section per function, thousands to hundreds of thousands. The table is
/// read whole, so a claim of 2^32 sections is refused before it is.
pub const MAX_SECTIONS: u64 = 1 << 20;

/// Program headers: a handful in any real file; `e_phnum` is 16 bits wide
/// unless extended, and nothing needs more.
pub const MAX_PROGRAM_HEADERS: u64 = 1 << 16;

/// Defined symbols kept from one table. The largest real binaries define a
/// few million; each kept symbol costs about 150 bytes.
pub const MAX_SYMBOLS: usize = 1 << 23;

/// All symbol names of one table together (kept raw and demangled). Real
/// tables hold at most a few hundred MB of names; many symbols pointing at
/// one long name must not multiply it.
pub const MAX_SYMBOL_NAME_BYTES: u64 = 512 << 20;

/// DWARF sections copied into memory for `watch`'s file:line lookups. Big
/// programs carry a few hundred MB; past this, lookups are off with a note
/// rather than costing the memory of the machine being debugged.
pub const MAX_DWARF_BYTES: u64 = 1 << 30;

/// Opens an ELF file the way every untrusted file is opened, then checks
/// its size and header tables. Links are followed (a user's path, a
/// `/proc/PID/map_files` entry); what they lead to is checked.
pub(crate) fn open_elf(path: &Path, shown: &str) -> Result<File, SymbolError> {
    let (file, meta) = untrusted::open_regular(path, true).map_err(|e| SymbolError::io(shown, &e))?;
    if meta.len() > MAX_ELF_BYTES {
        return Err(SymbolError::io(shown, &untrusted::too_large(MAX_ELF_BYTES)));
    }
    check_tables(&file, shown)?;
    Ok(file)
}

fn read_at(file: &File, offset: u64, bytes: &mut [u8]) -> bool {
    file.read_exact_at(bytes, offset).is_ok()
}

/// Refuses section and program header tables beyond the caps. Files that
/// are not ELF, or too short to say, are left for the parser to refuse.
fn check_tables(file: &File, shown: &str) -> Result<(), SymbolError> {
    let mut header = [0u8; 64];
    if !read_at(file, 0, &mut header) && !read_at(file, 0, &mut header[..52]) {
        return Ok(());
    }
    if header[..4] != *b"\x7fELF" {
        return Ok(());
    }
    let little = header[5] != 2;
    let number = |bytes: &[u8]| -> u64 {
        let mut padded = [0u8; 8];
        if little {
            padded[..bytes.len()].copy_from_slice(bytes);
            u64::from_le_bytes(padded)
        } else {
            padded[8 - bytes.len()..].copy_from_slice(bytes);
            u64::from_be_bytes(padded)
        }
    };
    // (e_shoff, e_phnum, e_shnum, and in section 0: sh_size, sh_info)
    let wide = header[4] == 2;
    let (shoff, phnum, shnum) = if wide {
        (
            number(&header[0x28..0x30]),
            number(&header[0x38..0x3a]),
            number(&header[0x3c..0x3e]),
        )
    } else {
        (
            number(&header[0x20..0x24]),
            number(&header[0x2c..0x2e]),
            number(&header[0x30..0x32]),
        )
    };
    let (mut sections, mut segments) = (shnum, phnum);
    // Extended numbering: counts past 16 bits live in section header 0.
    if (shnum == 0 || phnum == 0xffff) && shoff != 0 {
        let mut first = [0u8; 64];
        let len = if wide { 64 } else { 40 };
        if read_at(file, shoff, &mut first[..len]) {
            let (size, info) = if wide {
                (number(&first[0x20..0x28]), number(&first[0x2c..0x30]))
            } else {
                (number(&first[0x14..0x18]), number(&first[0x1c..0x20]))
            };
            if shnum == 0 {
                sections = size;
            }
            if phnum == 0xffff {
                segments = info;
            }
        }
    }
    if sections > MAX_SECTIONS || segments > MAX_PROGRAM_HEADERS {
        return Err(SymbolError::malformed(
            shown,
            format!(
                "it claims {sections} section and {segments} program headers \
                 (the limits are {MAX_SECTIONS} and {MAX_PROGRAM_HEADERS})"
            ),
        ));
    }
    Ok(())
}

/// The error for a symbol table over its caps.
pub(crate) fn too_many_symbols(shown: &str, symbols: usize, name_bytes: u64) -> SymbolError {
    SymbolError::malformed(
        shown,
        format!(
            "more than {symbols} symbols or {} of symbol names; refusing to keep them",
            format_cap(name_bytes)
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::CString;
    use std::os::unix::ffi::OsStrExt;

    fn elf64(shnum: u16, phnum: u16, section0_size: u64) -> Vec<u8> {
        let mut bytes = vec![0u8; 128];
        bytes[..4].copy_from_slice(b"\x7fELF");
        bytes[4] = 2; // 64-bit
        bytes[5] = 1; // little-endian
        bytes[0x28..0x30].copy_from_slice(&64u64.to_le_bytes()); // e_shoff
        bytes[0x38..0x3a].copy_from_slice(&phnum.to_le_bytes());
        bytes[0x3c..0x3e].copy_from_slice(&shnum.to_le_bytes());
        bytes[64 + 0x20..64 + 0x28].copy_from_slice(&section0_size.to_le_bytes());
        bytes
    }

    fn check(bytes: &[u8]) -> Result<(), SymbolError> {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("elf");
        std::fs::write(&path, bytes).unwrap();
        check_tables(&File::open(&path).unwrap(), "elf")
    }

    #[test]
    fn header_tables_over_the_caps_are_refused_before_reading() {
        assert!(check(&elf64(30, 10, 0)).is_ok());
        // e_shnum 0: the real count is section 0's sh_size.
        let err = check(&elf64(0, 10, 1 << 31)).unwrap_err().to_string();
        assert!(err.contains("claims 2147483648 section"), "{err}");
        assert!(check(&elf64(0, 10, 1000)).is_ok());
        assert!(check(b"not an ELF at all").is_ok(), "left to the parser");
    }

    #[test]
    fn fifos_devices_and_giants_are_refused_without_blocking() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("fifo");
        let c_path = CString::new(fifo.as_os_str().as_bytes()).unwrap();
        // SAFETY: c_path is a valid NUL-terminated string alive for the call.
        assert_eq!(unsafe { libc::mkfifo(c_path.as_ptr(), 0o644) }, 0);
        let (sender, receiver) = std::sync::mpsc::channel();
        let shown = fifo.display().to_string();
        std::thread::spawn(move || drop(sender.send(open_elf(&fifo, &shown).err().map(|e| e.to_string()))));
        let err = receiver
            .recv_timeout(std::time::Duration::from_secs(10))
            .expect("blocked on a FIFO");
        assert!(err.unwrap().ends_with("fifo: is a FIFO, not a regular file"));
        let err = open_elf(Path::new("/dev/zero"), "/dev/zero").unwrap_err();
        assert_eq!(err.to_string(), "/dev/zero: is a character device, not a regular file");
        let giant = dir.path().join("giant");
        File::create(&giant).unwrap().set_len(MAX_ELF_BYTES + 1).unwrap();
        let err = open_elf(&giant, "giant").unwrap_err();
        assert!(err.to_string().starts_with("giant: larger than 4 GiB"), "{err}");
    }
}
