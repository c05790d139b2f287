//! `syscalls:sys_enter_open*` records: the address of the file name in
//! the opener's memory, and the directory it is relative to.

use super::{Format, FormatError};

/// `AT_FDCWD`: a relative name starts at the opener's working directory.
pub const AT_FDCWD: i64 = -100;

/// Where the name's address and the directory fd sit in a record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Layout {
    pub filename_offset: usize,
    /// `open` has no `dfd`: its relative names start at the cwd.
    pub dfd_offset: Option<usize>,
}

impl Layout {
    pub fn parse(format: &str) -> Result<Layout, FormatError> {
        let format = Format::parse(format);
        let filename = format.require("sys_enter_open*", "filename")?;
        if filename.size != 8 {
            return Err(FormatError::FilenameNotPointer { size: filename.size });
        }
        Ok(Layout {
            filename_offset: filename.offset,
            dfd_offset: format.field("dfd").filter(|f| f.size == 8).map(|f| f.offset),
        })
    }

    /// The name's address and the directory fd; `None` for a short record.
    pub fn decode(&self, raw: &[u8]) -> Option<(u64, i64)> {
        let word = |at: usize| -> Option<u64> {
            let bytes = raw.get(at..at.checked_add(8)?)?;
            Some(u64::from_ne_bytes(bytes.try_into().ok()?))
        };
        let pointer = word(self.filename_offset)?;
        let dfd = match self.dfd_offset {
            Some(at) => word(at)? as i32 as i64,
            None => AT_FDCWD,
        };
        Some((pointer, dfd))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// tracefs `events/syscalls/sys_enter_open/format` on this project's
    /// VM (6.18.44 kernel), captured 2026-11-24.
    const OPEN_6_18: &str = "name: sys_enter_open
ID: 784
format:
\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;
\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;
\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;
\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;

\tfield:int __syscall_nr;\toffset:8;\tsize:4;\tsigned:1;
\tfield:const char * filename;\toffset:16;\tsize:8;\tsigned:0;
\tfield:int flags;\toffset:24;\tsize:8;\tsigned:0;
\tfield:umode_t mode;\toffset:32;\tsize:8;\tsigned:0;

print fmt: \"filename: 0x%08lx, flags: 0x%08lx, mode: 0x%08lx\", ((unsigned long)(REC->filename)), ((unsigned long)(REC->flags)), ((unsigned long)(REC->mode))
";

    #[test]
    fn openat_and_open_records_decode() {
        let openat = Layout::parse(super::super::tests::OPENAT_6_18).unwrap();
        assert_eq!((openat.filename_offset, openat.dfd_offset), (24, Some(16)));
        let mut raw = vec![0u8; 48];
        raw[16..24].copy_from_slice(&(-100i64 as u64).to_ne_bytes());
        raw[24..32].copy_from_slice(&0x7ffd_1234u64.to_ne_bytes());
        assert_eq!(openat.decode(&raw), Some((0x7ffd_1234, AT_FDCWD)));
        // A dfd stored as a 32-bit int sign-extended or not reads the same.
        raw[16..24].copy_from_slice(&0xffff_ff9cu64.to_ne_bytes());
        assert_eq!(openat.decode(&raw).map(|d| d.1), Some(AT_FDCWD));
        assert_eq!(openat.decode(&raw[..31]), None, "truncated");
        let open = Layout::parse(OPEN_6_18).unwrap();
        assert_eq!((open.filename_offset, open.dfd_offset), (16, None));
        assert_eq!(open.decode(&raw[..24]).map(|d| d.1), Some(AT_FDCWD));
    }

    #[test]
    fn a_format_without_a_pointer_name_is_refused() {
        assert!(Layout::parse("").unwrap_err().to_string().contains("`filename`"));
        let four = "\tfield:const char * filename;\toffset:16;\tsize:4;\tsigned:0;\n";
        assert_eq!(Layout::parse(four), Err(FormatError::FilenameNotPointer { size: 4 }));
        assert_eq!(
            FormatError::FilenameNotPointer { size: 4 }.to_string(),
            "sys_enter_open* `filename` is 4 bytes, not a 64-bit pointer"
        );
    }
}
