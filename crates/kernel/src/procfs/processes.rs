//! Finding processes by name, e.g. a running irqbalance that would undo a
//! manual IRQ affinity fix within seconds.

use crate::error::ReadError;
use crate::root::Root;

/// PIDs whose `comm` is exactly `name`. Processes that exit while we look
/// are skipped: their absence is the answer for them.
pub fn find_by_comm(root: &Root, name: &str) -> Result<Vec<u32>, ReadError> {
    let mut found = Vec::new();
    for entry in root.list("proc")?.unwrap_or_default() {
        let Ok(pid) = entry.parse::<u32>() else {
            continue;
        };
        match root.read(&format!("proc/{pid}/comm")) {
            Ok(comm) if comm.trim_end() == name => found.push(pid),
            Ok(_) => {}
            Err(e) if e.is_not_found() => {}
            Err(ReadError::PermissionDenied { .. }) => {}
            Err(e) => return Err(e),
        }
    }
    Ok(found)
}
