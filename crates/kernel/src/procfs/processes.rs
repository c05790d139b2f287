//! Finding processes by name, e.g. a running irqbalance that would undo a
//! manual IRQ affinity fix within seconds.

use crate::error::ReadError;
use crate::root::Root;
use crate::unread::{Gaps, Unread};

/// PIDs whose `comm` is exactly `name`. Processes that exit while we look
/// are skipped: their absence is the answer for them. A `comm` that exists
/// but cannot be read (hidepid, a hostile tree) leaves the answer open, so
/// those are counted and noted in `gaps` as one entry.
pub fn find_by_comm(root: &Root, name: &str, gaps: &mut Gaps) -> Result<Vec<u32>, ReadError> {
    let mut found = Vec::new();
    let (mut unreadable, mut example) = (0u64, None);
    let mut listed = 0u64;
    for entry in root.list("proc")?.unwrap_or_default() {
        let Ok(pid) = entry.parse::<u32>() else {
            continue;
        };
        listed += 1;
        match root.read(&format!("proc/{pid}/comm")) {
            Ok(comm) if comm.trim_end() == name => found.push(pid),
            Ok(_) => {}
            Err(e) if e.is_not_found() => {}
            Err(e) => {
                unreadable += 1;
                example.get_or_insert(e);
            }
        }
    }
    // A running system has at least its init; a tree listing no process
    // did not record them, and cannot say what is not running.
    if listed == 0 {
        gaps.push(Unread::new(
            "/proc",
            "lists no process, though a running system always has one",
        ));
    }
    if let Some(example) = example {
        gaps.push(Unread::new(
            COMM_PATTERN,
            format!("{unreadable} process(es) could not be read, e.g. {example}"),
        ));
    }
    Ok(found)
}

/// How the unreadable `comm` files of [`find_by_comm`] are named.
pub const COMM_PATTERN: &str = "/proc/[pid]/comm";
