//! Where one page of a process is, as `move_pages(2)` and pagemap answer
//! it ([`PageStatus`], [`Residency`]); the system calls are
//! `numasleuth_kernel::pages`.

use serde::Serialize;
use thiserror::Error;

use crate::procfs::pagemap::PagemapEntry;

/// Pages per system call: bounds the kernel's temporary arrays and ours.
pub const BATCH_PAGES: usize = 4096;

/// Where one page is, as move_pages reports it. The errors are ambiguous
/// on their own; [`residency`] reads them with pagemap and the mappings.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum PageStatus {
    Node(u32),
    /// -ENOENT: no page the kernel will name: never touched, swapped out,
    /// or (6.1-era kernels) marked PROT_NONE for a NUMA-balancing hinting
    /// fault.
    NotPresent,
    /// -EFAULT: the shared zero page, no mapping at that address, or (6.1
    /// and older) a never-touched anonymous page.
    ZeroOrUnmapped,
    /// Any other negative status (e.g. -EBUSY, -EACCES when moving), as a
    /// positive errno.
    Failed(i32),
}

/// What a page is, from move_pages' answer, pagemap's entry and whether
/// its address lies in a mapping.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Residency {
    /// Resident on this node.
    Node(u32),
    /// Resident (pagemap: present) but invisible to move_pages, which says
    /// "not present": the NUMA-balancing scanner marked it PROT_NONE and
    /// the process has not touched it since (its hinting fault). On 6.1
    /// kernels move_pages can neither find nor move it until then.
    HintingFault,
    /// Inside a mapping, and nothing was ever put there.
    NotYetTouched,
    SwappedOut,
    /// Read but never written: the shared zero page, on no node of its own.
    ZeroPage,
    /// No mapping at this address.
    Unmapped,
    /// move_pages could not answer, with the errno.
    Unknown(i32),
}

impl Residency {
    pub fn node(self) -> Option<u32> {
        match self {
            Residency::Node(n) => Some(n),
            _ => None,
        }
    }

    /// Resident somewhere, whether or not move_pages can see it.
    pub fn is_resident(self) -> bool {
        matches!(self, Residency::Node(_) | Residency::HintingFault)
    }

    /// In words, for reports and errors.
    pub fn describe(self) -> String {
        match self {
            Residency::Node(n) => format!("on node {n}"),
            Residency::HintingFault => {
                "between NUMA-balancing hinting faults (resident, hidden from move_pages)".into()
            }
            Residency::NotYetTouched => "not yet touched".into(),
            Residency::SwappedOut => "swapped out".into(),
            Residency::ZeroPage => "the shared zero page (read, never written)".into(),
            Residency::Unmapped => "unmapped (no mapping at that address)".into(),
            Residency::Unknown(errno) => format!("unknown ({})", std::io::Error::from_raw_os_error(errno)),
        }
    }
}

/// Reads move_pages' `status` with the page's pagemap entry (`None` when
/// pagemap could not be read) and whether its address is inside a mapping.
/// Without pagemap, "not present" in a mapping is taken as never touched
/// and -EFAULT there as the zero page, their usual causes.
pub fn residency(status: PageStatus, pagemap: Option<PagemapEntry>, mapped: bool) -> Residency {
    match status {
        PageStatus::Node(n) => return Residency::Node(n),
        PageStatus::Failed(errno) => return Residency::Unknown(errno),
        _ if !mapped => return Residency::Unmapped,
        _ => {}
    }
    match (status, pagemap) {
        (_, Some(e)) if e.swapped => Residency::SwappedOut,
        (PageStatus::NotPresent, Some(e)) if e.present => Residency::HintingFault,
        // -EFAULT on a present entry: the zero page (FOLL_DUMP skips it).
        (PageStatus::ZeroOrUnmapped, Some(e)) if e.present => Residency::ZeroPage,
        (PageStatus::ZeroOrUnmapped, None) => Residency::ZeroPage,
        // Nothing in the page table: on 6.1 an untouched anonymous page
        // is -EFAULT, on newer kernels -ENOENT; both mean untouched.
        _ => Residency::NotYetTouched,
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum PagesError {
    #[error(
        "move_pages on process {pid}: permission denied (another user's process needs root or \
         CAP_SYS_PTRACE to query, CAP_SYS_NICE to move)"
    )]
    PermissionDenied { pid: u32 },
    #[error("move_pages: process {pid} does not exist (it may have exited)")]
    NoSuchProcess { pid: u32 },
    /// ENOSYS; `why` says whether the kernel lacks NUMA or something
    /// (an emulator, a seccomp filter) refused the call.
    #[error("move_pages is not available: {why}")]
    Unsupported { why: String },
    #[error("move_pages: node {node} is not online or may not be used by process {pid}")]
    BadNode { pid: u32, node: u32 },
    #[error("move_pages on process {pid}: {message}")]
    Other { pid: u32, message: String },
}
