//! What a mapping holds, judged by what backs it: the one classifier that
//! `inspect`'s placement model, `hotpages`' region names and `hotlines`'
//! region labels share, so the three cannot call the same mapping by
//! different kinds. (The placement model looks first at the sections of an
//! ELF object and at numa_maps' own heap, stack and huge flags, then here.)

use numasleuth_parse::procfs::maps::{Backing, Mapping};

use crate::process::MemoryKind;

/// Files whose mappings are shared memory: POSIX and System V shared
/// memory, memfds, and the kernel's names for shared anonymous and
/// hugetlb mappings.
const SHARED_MEMORY_PREFIXES: [&str; 5] = ["/dev/shm/", "/SYSV", "/memfd:", "/dev/zero", "/anon_hugepage"];

/// [`MemoryKind`] of a `/proc/PID/maps` line (parse's type, so a trait).
pub trait MappingKind {
    /// The kind by what backs the mapping alone.
    fn kind(&self) -> MemoryKind;

    /// The kind, where anonymous memory holding a thread's stack pointer
    /// (`holds_a_stack`) is that thread's stack: threads other than the
    /// first have their stacks in plain anonymous mappings.
    fn kind_given_stack(&self, holds_a_stack: bool) -> MemoryKind;
}

impl MappingKind for Mapping {
    fn kind(&self) -> MemoryKind {
        backing_kind(&self.backing)
    }

    fn kind_given_stack(&self, holds_a_stack: bool) -> MemoryKind {
        match self.backing {
            Backing::Anonymous if holds_a_stack => MemoryKind::Stack,
            _ => self.kind(),
        }
    }
}

fn backing_kind(backing: &Backing) -> MemoryKind {
    match backing {
        Backing::Special(name) if name == "[heap]" => MemoryKind::Heap,
        Backing::Special(name) if name == "[stack]" => MemoryKind::Stack,
        Backing::Special(name) if name.starts_with("[anon_shmem:") => MemoryKind::Shm,
        Backing::Special(name) if name.starts_with("[anon:") => MemoryKind::Anon,
        Backing::Special(_) => MemoryKind::Special,
        Backing::Anonymous => MemoryKind::Anon,
        Backing::File { path, .. } if SHARED_MEMORY_PREFIXES.iter().any(|p| path.starts_with(p)) => MemoryKind::Shm,
        Backing::File { .. } => MemoryKind::File,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use numasleuth_parse::procfs::maps::Perms;

    fn mapping(backing: Backing) -> Mapping {
        Mapping {
            start: 0x1000,
            end: 0x2000,
            perms: Perms::default(),
            offset_bytes: 0,
            dev_major: 0,
            dev_minor: 0,
            inode: 0,
            backing,
        }
    }

    fn file(path: &str) -> Backing {
        Backing::File {
            path: path.into(),
            deleted: false,
        }
    }

    #[test]
    fn every_backing_has_one_kind() {
        let special = |name: &str| mapping(Backing::Special(name.into())).kind();
        assert_eq!(special("[heap]"), MemoryKind::Heap);
        assert_eq!(special("[stack]"), MemoryKind::Stack);
        assert_eq!(special("[anon_shmem:pool]"), MemoryKind::Shm);
        assert_eq!(special("[anon:jemalloc]"), MemoryKind::Anon);
        assert_eq!(special("[vdso]"), MemoryKind::Special);
        assert_eq!(mapping(Backing::Anonymous).kind(), MemoryKind::Anon);
        for shm in [
            "/dev/shm/q",
            "/SYSV00000000",
            "/memfd:buf",
            "/dev/zero",
            "/anon_hugepage",
        ] {
            assert_eq!(mapping(file(shm)).kind(), MemoryKind::Shm, "{shm}");
        }
        assert_eq!(mapping(file("/usr/lib/libc.so.6")).kind(), MemoryKind::File);
    }

    #[test]
    fn only_plain_anonymous_memory_becomes_a_stack() {
        assert_eq!(mapping(Backing::Anonymous).kind_given_stack(true), MemoryKind::Stack);
        assert_eq!(mapping(Backing::Anonymous).kind_given_stack(false), MemoryKind::Anon);
        let named = mapping(Backing::Special("[anon:x]".into()));
        assert_eq!(named.kind_given_stack(true), MemoryKind::Anon);
    }
}
