//! The errnos `perf_event_open` answers with, as numbers: a failure keeps
//! the kernel's number, and what it means is decided on this type, never
//! on a name. The values are Linux's generic ones (asm-generic's
//! errno-base.h and errno.h), which x86-64 and arm64 share; `probe`'s
//! tests check each against libc's.

/// An errno numasleuth reads a meaning into; [`Errno::Other`] keeps any
/// other number.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Errno {
    Perm,
    NoEntry,
    NoProcess,
    TooBig,
    Access,
    Busy,
    NoDevice,
    Invalid,
    FileTable,
    TooManyFiles,
    NoSpace,
    NoSys,
    Overflow,
    NotSupported,
    Other(i32),
}

/// Each named errno with its number and the name the man pages use.
const TABLE: [(Errno, i32, &str); 14] = [
    (Errno::Perm, 1, "EPERM"),
    (Errno::NoEntry, 2, "ENOENT"),
    (Errno::NoProcess, 3, "ESRCH"),
    (Errno::TooBig, 7, "E2BIG"),
    (Errno::Access, 13, "EACCES"),
    (Errno::Busy, 16, "EBUSY"),
    (Errno::NoDevice, 19, "ENODEV"),
    (Errno::Invalid, 22, "EINVAL"),
    (Errno::FileTable, 23, "ENFILE"),
    (Errno::TooManyFiles, 24, "EMFILE"),
    (Errno::NoSpace, 28, "ENOSPC"),
    (Errno::NoSys, 38, "ENOSYS"),
    (Errno::Overflow, 75, "EOVERFLOW"),
    (Errno::NotSupported, 95, "EOPNOTSUPP"),
];

impl Errno {
    pub fn from_raw(number: i32) -> Errno {
        TABLE
            .iter()
            .find(|(_, n, _)| *n == number)
            .map_or(Errno::Other(number), |(errno, _, _)| *errno)
    }

    pub fn raw(self) -> i32 {
        match self {
            Errno::Other(number) => number,
            named => TABLE.iter().find(|(e, _, _)| *e == named).map_or(0, |(_, n, _)| *n),
        }
    }

    /// `ENOENT`, `EACCES`…, for people who will search for it; `errno`
    /// for a number without a name here.
    pub fn name(self) -> &'static str {
        TABLE
            .iter()
            .find(|(e, _, _)| *e == self)
            .map_or("errno", |(_, _, name)| name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_and_names_go_both_ways() {
        for (errno, number, name) in TABLE {
            assert_eq!(Errno::from_raw(number), errno);
            assert_eq!(errno.raw(), number);
            assert_eq!(errno.name(), name);
        }
        assert_eq!(Errno::from_raw(5), Errno::Other(5));
        assert_eq!(Errno::Other(5).raw(), 5);
        assert_eq!(Errno::Other(5).name(), "errno");
    }
}
