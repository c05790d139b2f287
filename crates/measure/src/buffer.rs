//! [`NodeBuffer`]: memory on a chosen NUMA node, with proof of where it
//! landed.
//!
//! Binding is not trusted: `mbind` can succeed while pages still come from
//! elsewhere (a cpuset without that node, a kernel fallback, pages that were
//! already present), so after faulting the buffer in we ask the kernel where
//! every sampled page actually is (`move_pages` in query mode) and say so.

use std::ptr::NonNull;

use serde::{Deserialize, Serialize};

use crate::error::MeasureError;
use crate::sys;

/// Which pages back the buffer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum PageKind {
    /// Base pages only (no THP advice): the most TLB misses.
    Small,
    /// `madvise(MADV_HUGEPAGE)`: transparent huge pages where the kernel
    /// can find them, base pages otherwise.
    Transparent,
    /// `MAP_HUGETLB` from the reserved pool: huge pages or an error.
    HugeTlb,
}

/// Explicit huge page size assumed for `MAP_HUGETLB` (the default size on
/// x86_64 and on arm64 with 4 KiB base pages).
pub const HUGETLB_PAGE_BYTES: usize = 2 << 20;

/// Most pages asked about per `move_pages` call and in all; enough to catch
/// any partial placement without making a 1 GiB buffer slow to check.
const QUERY_CHUNK_PAGES: usize = 8192;
const MAX_PAGES_CHECKED: usize = 1 << 16;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NodePages {
    pub node: u32,
    pub pages: usize,
}

/// Where a buffer's pages are, as the kernel reported it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Placement {
    pub requested_node: u32,
    pub pages_checked: usize,
    pub pages_on_node: usize,
    /// Pages found on other nodes.
    pub pages_elsewhere: Vec<NodePages>,
    /// Pages the kernel said were not present or could not be queried.
    pub pages_unknown: usize,
    /// True only when every checked page is on the requested node.
    pub verified: bool,
    /// Why no page could be checked, when none could.
    pub unverifiable: Option<String>,
}

impl Placement {
    /// No page checked yet: what a new buffer holds until it is queried,
    /// and where each query starts counting.
    fn unchecked(requested_node: u32) -> Self {
        Placement {
            requested_node,
            pages_checked: 0,
            pages_on_node: 0,
            pages_elsewhere: Vec::new(),
            pages_unknown: 0,
            verified: false,
            unverifiable: None,
        }
    }

    pub fn fraction_on_node(&self) -> f64 {
        if self.pages_checked == 0 {
            0.0
        } else {
            self.pages_on_node as f64 / self.pages_checked as f64
        }
    }
}

/// Anonymous memory bound to one node; unmapped on drop.
#[derive(Debug)]
pub struct NodeBuffer {
    ptr: NonNull<u8>,
    len_bytes: usize,
    mapped_bytes: usize,
    node: u32,
    kind: PageKind,
    placement: Placement,
}

// SAFETY: the buffer owns its mapping exclusively, like a `Vec<u8>`; shared
// access goes through `&self` (read-only or atomics) and mutation through
// `&mut self`.
unsafe impl Send for NodeBuffer {}
// SAFETY: see `Send`; `&NodeBuffer` only hands out shared views.
unsafe impl Sync for NodeBuffer {}

impl NodeBuffer {
    /// Maps `len_bytes` (rounded up to whole pages), binds it to `node`,
    /// faults every page in and checks where the pages landed.
    pub fn allocate(len_bytes: usize, node: u32, kind: PageKind) -> Result<Self, MeasureError> {
        if len_bytes == 0 {
            return Err(MeasureError::Invalid("a buffer needs at least one byte".into()));
        }
        let granule = if kind == PageKind::HugeTlb {
            HUGETLB_PAGE_BYTES
        } else {
            sys::page_size()
        };
        let mapped_bytes = len_bytes.div_ceil(granule) * granule;
        let ptr = sys::map_anonymous(mapped_bytes, kind == PageKind::HugeTlb)
            .map_err(|e| map_error(e, mapped_bytes, node, kind))?;
        // From here on, dropping `buffer` unmaps, so early returns do not leak.
        let mut buffer = NodeBuffer {
            ptr: NonNull::new(ptr).expect("mmap never returns NULL on success"),
            len_bytes,
            mapped_bytes,
            node,
            kind,
            placement: Placement::unchecked(node),
        };
        let numa_syscalls = match sys::bind_to_node(ptr, mapped_bytes, node) {
            Ok(()) => true,
            // A kernel without NUMA has only node 0, which is where the
            // pages go anyway; anything else is a real failure.
            Err(e) if e.raw_os_error() == Some(libc::ENOSYS) && node == 0 => false,
            Err(e) => {
                let reason = match e.raw_os_error() {
                    Some(libc::EINVAL) => format!("node {node} does not exist or has no memory ({e})"),
                    Some(libc::EPERM) => format!("node {node} is outside this process's cpuset.mems ({e})"),
                    _ => e.to_string(),
                };
                return Err(MeasureError::Bind { node, reason });
            }
        };
        if kind == PageKind::Transparent {
            // THP may be off ("never"); then base pages it is, which the
            // placement check does not care about.
            let _ = sys::advise(ptr, mapped_bytes, libc::MADV_HUGEPAGE);
        }
        buffer.prefault()?;
        buffer.placement = if numa_syscalls {
            buffer.query_placement()
        } else {
            Placement {
                unverifiable: Some(numasleuth_kernel::pages::enosys_reason(
                    &numasleuth_kernel::Root::live(),
                    "mbind",
                )),
                ..buffer.placement.clone()
            }
        };
        Ok(buffer)
    }

    /// Faults every page in now, so no page fault lands inside a sample.
    /// `MADV_POPULATE_WRITE` reports a shortage as an error instead of the
    /// SIGBUS a plain write to a missing hugetlb page would raise.
    fn prefault(&mut self) -> Result<(), MeasureError> {
        match sys::advise(self.ptr.as_ptr(), self.mapped_bytes, libc::MADV_POPULATE_WRITE) {
            Ok(()) => Ok(()),
            Err(e) if e.raw_os_error() == Some(libc::EINVAL) && self.kind != PageKind::HugeTlb => {
                // Kernel older than 5.14: touch one byte per page instead.
                let step = sys::page_size();
                let bytes = self.as_bytes_mut();
                for offset in (0..bytes.len()).step_by(step) {
                    bytes[offset] = 0;
                }
                Ok(())
            }
            Err(e) if self.kind == PageKind::HugeTlb => match e.raw_os_error() {
                Some(libc::ENOMEM | libc::EFAULT) => Err(MeasureError::NoHugePages {
                    bytes: self.mapped_bytes,
                    node: self.node,
                }),
                Some(libc::EINVAL) => Err(MeasureError::Prefault {
                    bytes: self.mapped_bytes,
                    node: self.node,
                    reason: "this kernel cannot fault hugetlb pages in safely (MADV_POPULATE_WRITE needs Linux 5.14)"
                        .into(),
                }),
                _ => Err(prefault_error(e, self.mapped_bytes, self.node)),
            },
            Err(e) => Err(prefault_error(e, self.mapped_bytes, self.node)),
        }
    }

    /// Asks the kernel where an evenly spread sample of pages is.
    pub fn query_placement(&self) -> Placement {
        let page = sys::page_size();
        let pages = self.mapped_bytes / page;
        let stride = pages.div_ceil(MAX_PAGES_CHECKED).max(1);
        let addresses: Vec<*mut libc::c_void> = (0..pages)
            .step_by(stride)
            .map(|p| self.ptr.as_ptr().wrapping_add(p * page).cast())
            .collect();
        let mut placement = Placement::unchecked(self.node);
        for chunk in addresses.chunks(QUERY_CHUNK_PAGES) {
            let status = match sys::query_nodes(chunk) {
                Ok(status) => status,
                Err(e) => {
                    placement.unverifiable = Some(format!("move_pages query failed: {e}"));
                    return placement;
                }
            };
            placement.pages_checked += status.len();
            for node in status {
                match u32::try_from(node) {
                    Ok(n) if n == self.node => placement.pages_on_node += 1,
                    Ok(n) => match placement.pages_elsewhere.iter_mut().find(|e| e.node == n) {
                        Some(entry) => entry.pages += 1,
                        None => placement.pages_elsewhere.push(NodePages { node: n, pages: 1 }),
                    },
                    Err(_) => placement.pages_unknown += 1,
                }
            }
        }
        placement.pages_elsewhere.sort_by_key(|e| e.node);
        placement.verified = placement.pages_checked > 0 && placement.pages_on_node == placement.pages_checked;
        placement
    }

    pub fn placement(&self) -> &Placement {
        &self.placement
    }

    pub fn node(&self) -> u32 {
        self.node
    }

    pub fn kind(&self) -> PageKind {
        self.kind
    }

    pub fn len_bytes(&self) -> usize {
        self.len_bytes
    }

    pub fn as_ptr(&self) -> *mut u8 {
        self.ptr.as_ptr()
    }

    pub fn as_bytes_mut(&mut self) -> &mut [u8] {
        // SAFETY: the mapping is `mapped_bytes >= len_bytes` long, readable
        // and writable, and `&mut self` makes this view exclusive.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.len_bytes) }
    }

    /// The buffer as 64-bit words (the mapping is page aligned; a trailing
    /// partial word is left out).
    pub fn as_words(&self) -> &[u64] {
        // SAFETY: page-aligned, initialised (faulted in as zeroes), valid
        // for `len_bytes`; shared view under `&self`.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr().cast(), self.len_bytes / 8) }
    }

    pub fn as_words_mut(&mut self) -> &mut [u64] {
        // SAFETY: as `as_words`, exclusive under `&mut self`.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr().cast(), self.len_bytes / 8) }
    }
}

impl Drop for NodeBuffer {
    fn drop(&mut self) {
        // SAFETY: the whole mapping from `allocate`; `&mut self` proves no
        // view of it outlives this call.
        unsafe { sys::unmap(self.ptr.as_ptr(), self.mapped_bytes) };
    }
}

fn map_error(e: std::io::Error, bytes: usize, node: u32, kind: PageKind) -> MeasureError {
    match (kind, e.raw_os_error()) {
        (PageKind::HugeTlb, Some(libc::ENOMEM)) => MeasureError::NoHugePages { bytes, node },
        (PageKind::HugeTlb, Some(libc::EPERM | libc::EACCES)) => MeasureError::HugePagePermission(e.to_string()),
        _ => MeasureError::Map {
            bytes,
            reason: e.to_string(),
        },
    }
}

fn prefault_error(e: std::io::Error, bytes: usize, node: u32) -> MeasureError {
    let reason = match e.raw_os_error() {
        Some(libc::ENOMEM) => format!("node {node} ran out of memory ({e})"),
        _ => e.to_string(),
    };
    MeasureError::Prefault { bytes, node, reason }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lands_on_node_zero_and_proves_it() {
        let mut buffer = NodeBuffer::allocate(3 * 4096 + 5, 0, PageKind::Transparent).unwrap();
        let placement = buffer.placement().clone();
        assert!(placement.verified, "{placement:?}");
        assert_eq!(placement.pages_checked, 4);
        assert_eq!(placement.fraction_on_node(), 1.0);
        assert_eq!(buffer.len_bytes(), 3 * 4096 + 5);
        assert!(buffer.as_words().iter().all(|w| *w == 0), "fresh pages are zero");
        buffer.as_words_mut()[10] = 7;
        assert_eq!(buffer.as_words()[10], 7);
    }

    #[test]
    fn small_pages_are_placed_too() {
        let buffer = NodeBuffer::allocate(1 << 20, 0, PageKind::Small).unwrap();
        assert!(buffer.placement().verified);
        assert_eq!(buffer.placement().pages_checked, 256);
    }

    #[test]
    fn a_node_that_does_not_exist_is_an_error() {
        let err = NodeBuffer::allocate(4096, 4000, PageKind::Small).unwrap_err();
        assert!(err.to_string().contains("node 4000"), "{err}");
    }

    #[test]
    fn zero_bytes_is_an_error() {
        assert!(NodeBuffer::allocate(0, 0, PageKind::Small).is_err());
    }

    /// Needs no reserved huge pages: on a machine with none (CI, this VM)
    /// it must be a clear error; with some, a verified buffer.
    #[test]
    fn hugetlb_is_a_buffer_or_a_clear_error() {
        match NodeBuffer::allocate(HUGETLB_PAGE_BYTES, 0, PageKind::HugeTlb) {
            Ok(buffer) => assert!(buffer.placement().verified),
            Err(e) => {
                let text = e.to_string();
                assert!(text.contains("huge pages") || text.contains("hugetlb"), "{text}");
            }
        }
    }
}
