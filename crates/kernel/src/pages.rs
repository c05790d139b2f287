//! `move_pages(2)`: which node each page of a process is on, and moving
//! pages to a node.
//!
//! numa_maps counts pages per mapping; only move_pages answers per page,
//! which is what splitting one writable mapping into `.data`, `.got` and
//! `.bss` needs. It is the one system call in this crate: a query on the
//! live system, not a file, so it cannot be read from a snapshot and
//! callers use it only when their root is live. The query needs the same
//! rights as reading numa_maps (ptrace-read); moving needs CAP_SYS_NICE for
//! another user's process (or `move_all`).

pub use numasleuth_parse::pages::*;

pub use crate::pages_reveal::{reveal, Revealed};

/// MPOL_MF_MOVE / MPOL_MF_MOVE_ALL from `<numaif.h>`.
const MPOL_MF_MOVE: libc::c_int = 1 << 1;

const MPOL_MF_MOVE_ALL: libc::c_int = 1 << 2;

/// The base page size that page counts read through `root` are in: this
/// machine's when live; a snapshot's from its manifest, where `snapshot`
/// records it; unknown (`None`) for a tree that does not say, so callers
/// keep counts in pages or say what they assume instead of guessing.
pub fn base_page_bytes(root: &crate::Root) -> Option<u64> {
    if root.is_live() {
        return Some(page_size_bytes());
    }
    let manifest = root.read(crate::snapshot::MANIFEST).ok()?;
    crate::snapshot::manifest::parse_origin(&manifest).base_page_bytes
}

/// The base page size in bytes.
pub fn page_size_bytes() -> u64 {
    // SAFETY: sysconf has no memory effects.
    let size = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    u64::try_from(size).ok().filter(|s| *s > 0).unwrap_or(4096)
}

/// The node of each page (addresses are rounded down to their page by the
/// kernel). `pid` 0 means this process.
pub fn query(pid: u32, addresses: &[u64]) -> Result<Vec<PageStatus>, PagesError> {
    call(pid, addresses, None, 0)
}

/// Moves each page to `node` and returns where each page is afterwards (or
/// why it could not move). `move_all` also moves pages shared with other
/// processes (MPOL_MF_MOVE_ALL, needs CAP_SYS_NICE).
pub fn move_to(pid: u32, addresses: &[u64], node: u32, move_all: bool) -> Result<Vec<PageStatus>, PagesError> {
    let flags = if move_all { MPOL_MF_MOVE_ALL } else { MPOL_MF_MOVE };
    call(pid, addresses, Some(node), flags)
}

fn call(pid: u32, addresses: &[u64], node: Option<u32>, flags: libc::c_int) -> Result<Vec<PageStatus>, PagesError> {
    let mut out = Vec::with_capacity(addresses.len());
    for batch in addresses.chunks(BATCH_PAGES) {
        let pages: Vec<*mut libc::c_void> = batch.iter().map(|&a| a as usize as *mut libc::c_void).collect();
        let nodes: Option<Vec<libc::c_int>> = node
            .map(|n| libc::c_int::try_from(n).map_err(|_| PagesError::BadNode { pid, node: n }))
            .transpose()?
            .map(|n| vec![n; batch.len()]);
        let mut status: Vec<libc::c_int> = vec![0; batch.len()];
        let nodes_ptr = nodes.as_ref().map_or(std::ptr::null(), |n| n.as_ptr());
        // SAFETY: every pointer refers to a live vector of `batch.len()`
        // elements; the kernel only reads `pages` and `nodes` and writes
        // `status`. The page addresses are not dereferenced by us.
        let result = unsafe {
            libc::syscall(
                libc::SYS_move_pages,
                pid as libc::pid_t,
                batch.len() as libc::c_ulong,
                pages.as_ptr(),
                nodes_ptr,
                status.as_mut_ptr(),
                flags,
            )
        };
        if result < 0 {
            let error = std::io::Error::last_os_error();
            return Err(match error.raw_os_error() {
                Some(libc::EPERM) | Some(libc::EACCES) => PagesError::PermissionDenied { pid },
                Some(libc::ESRCH) => PagesError::NoSuchProcess { pid },
                Some(libc::ENOSYS) => PagesError::Unsupported {
                    why: enosys_reason(&crate::Root::live(), "move_pages"),
                },
                Some(libc::ENODEV) => PagesError::BadNode {
                    pid,
                    node: node.unwrap_or_default(),
                },
                _ => PagesError::Other {
                    pid,
                    message: error.to_string(),
                },
            });
        }
        out.extend(status.iter().map(|&s| decode(s)));
    }
    Ok(out)
}

fn decode(status: libc::c_int) -> PageStatus {
    match status {
        s if s >= 0 => PageStatus::Node(s as u32),
        s if s == -libc::ENOENT => PageStatus::NotPresent,
        s if s == -libc::EFAULT => PageStatus::ZeroOrUnmapped,
        s => PageStatus::Failed(s.saturating_neg()),
    }
}

/// Why a NUMA system call (`call`: mbind, move_pages) said ENOSYS. A
/// kernel built without NUMA has no `sys/devices/system/node`; where its
/// nodes are listed the kernel has the call, and something between refused
/// it: an emulator such as qemu-user (which implements neither mbind nor
/// move_pages) or a seccomp filter. Blaming the kernel there sends the user
/// the wrong way.
pub fn enosys_reason(root: &crate::Root, call: &str) -> String {
    if root.exists("sys/devices/system/node/node0") {
        format!(
            "{call} says ENOSYS although this kernel has NUMA (sysfs lists its nodes): an emulator such as \
             qemu-user, or a seccomp filter, refuses the call"
        )
    } else {
        format!("the kernel was built without NUMA support ({call}: ENOSYS); all memory is node 0")
    }
}

#[cfg(test)]
mod tests {

    #[test]
    fn enosys_blames_the_kernel_only_when_it_lists_no_nodes() {
        let dir = tempfile::tempdir().unwrap();
        let root = crate::Root::directory(dir.path()).unwrap();
        let bare = enosys_reason(&root, "mbind");
        assert!(
            bare.starts_with("the kernel was built without NUMA support (mbind: ENOSYS)"),
            "{bare}"
        );
        std::fs::create_dir_all(dir.path().join("sys/devices/system/node/node0")).unwrap();
        let emulated = enosys_reason(&root, "move_pages");
        assert!(emulated.starts_with("move_pages says ENOSYS although"), "{emulated}");
        assert!(emulated.contains("an emulator such as qemu-user"), "{emulated}");
    }
    use super::*;

    #[test]
    fn a_capture_has_the_page_size_its_manifest_records_and_live_this_machines() {
        let dir = tempfile::tempdir().unwrap();
        let capture = crate::Root::directory(dir.path()).unwrap();
        assert_eq!(base_page_bytes(&capture), None);
        std::fs::write(
            dir.path().join(crate::snapshot::MANIFEST),
            r#"{"base_page_bytes": 65536}"#,
        )
        .unwrap();
        let capture = crate::Root::directory(dir.path()).unwrap();
        assert_eq!(base_page_bytes(&capture), Some(65536));
        let live = crate::Root::live();
        assert_eq!(base_page_bytes(&live), Some(page_size_bytes()));
    }

    #[test]
    fn statuses_decode() {
        assert_eq!(decode(1), PageStatus::Node(1));
        assert_eq!(decode(-libc::ENOENT), PageStatus::NotPresent);
        assert_eq!(decode(-libc::EFAULT), PageStatus::ZeroOrUnmapped);
        assert_eq!(decode(-libc::EBUSY), PageStatus::Failed(libc::EBUSY));
        assert_eq!(decode(i32::MIN), PageStatus::Failed(i32::MAX));
    }

    /// Every combination seen on the development VM (6.18) and in the QEMU
    /// 6.1 guest: status, pagemap bits 63..55 (`>> 55`), inside a mapping.
    #[test]
    fn residency_of_real_answers() {
        use crate::procfs::pagemap::parse_entry;
        let e = |top: u64| Some(parse_entry(top << 55));
        let enoent = PageStatus::NotPresent;
        let efault = PageStatus::ZeroOrUnmapped;
        // 6.1 guest: a .bss page marked PROT_NONE by the scanner.
        assert_eq!(residency(enoent, e(0x103), true), Residency::HintingFault);
        // 6.18: untouched anonymous page and untouched .bss.
        assert_eq!(residency(enoent, e(0), true), Residency::NotYetTouched);
        // 6.1: an untouched anonymous page is -EFAULT (FOLL_DUMP).
        assert_eq!(residency(efault, e(0), true), Residency::NotYetTouched);
        // Read, never written.
        assert_eq!(residency(efault, e(0x100), true), Residency::ZeroPage);
        // A hole between mappings, whatever the status says.
        assert_eq!(residency(efault, e(0), false), Residency::Unmapped);
        assert_eq!(residency(enoent, None, false), Residency::Unmapped);
        // Swapped out.
        let swapped = Some(parse_entry(1 << 62));
        assert_eq!(residency(enoent, swapped, true), Residency::SwappedOut);
        // No pagemap: the usual reading of each error.
        assert_eq!(residency(enoent, None, true), Residency::NotYetTouched);
        assert_eq!(residency(efault, None, true), Residency::ZeroPage);
        // An answer is an answer.
        assert_eq!(residency(PageStatus::Node(1), e(0), false), Residency::Node(1));
        assert_eq!(
            residency(PageStatus::Failed(16), e(0x102), true),
            Residency::Unknown(16)
        );
        assert!(Residency::HintingFault.is_resident() && !Residency::ZeroPage.is_resident());
        assert_eq!(Residency::NotYetTouched.describe(), "not yet touched");
    }

    #[test]
    fn own_touched_page_is_on_a_node_and_untouched_is_not() {
        let page = page_size_bytes() as usize;
        let mut touched = vec![0u8; page * 2];
        touched[page] = 1;
        let addr = touched.as_ptr() as u64 + page as u64;
        let status = match query(0, &[addr]) {
            Ok(status) => status,
            Err(e) => panic!("{e}"),
        };
        assert!(matches!(status[0], PageStatus::Node(_)), "{status:?}");
        // SAFETY: an anonymous private mapping we unmap ourselves below.
        let fresh = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                page,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        assert_ne!(fresh, libc::MAP_FAILED);
        assert_eq!(query(0, &[fresh as u64]).unwrap(), vec![PageStatus::NotPresent]);
        // Moving to the node it is on is a no-op that must succeed.
        if let PageStatus::Node(node) = status[0] {
            assert_eq!(move_to(0, &[addr], node, false).unwrap(), vec![PageStatus::Node(node)]);
        }
        // SAFETY: unmapping the mapping made above.
        unsafe { libc::munmap(fresh, page) };
        drop(touched);
    }

    #[test]
    fn a_process_that_does_not_exist() {
        let err = query(i32::MAX as u32, &[0x1000]).unwrap_err();
        assert!(
            matches!(err, PagesError::NoSuchProcess { .. } | PagesError::Unsupported { .. }),
            "{err}"
        );
    }

    #[test]
    fn an_offline_node_is_refused() {
        let mut page = vec![0u8; page_size_bytes() as usize];
        page[0] = 1;
        match move_to(0, &[page.as_ptr() as u64], 1000, false) {
            Err(PagesError::BadNode { node: 1000, .. }) | Err(PagesError::Unsupported { .. }) => {}
            other => panic!("{other:?}"),
        }
    }
}
