//! `meminfo`: each node's meminfo with a total, like `numastat -m`. It
//! reads only the files it prints from, as numastat does: the node
//! directories' meminfo and /proc/meminfo (for the huge page size), not
//! the topology; `analyze::meminfo` builds the table.

use numasleuth_analyze::meminfo::{table, MeminfoTable};
use numasleuth_kernel::procfs::meminfo::{self, Meminfo};
use numasleuth_kernel::sysfs::node;
use numasleuth_kernel::unread::Gaps;
use numasleuth_kernel::{IdList, Root};

use crate::Observer;

/// What `meminfo` is asked, with no clap in it.
pub struct MeminfoRequest {
    /// Only these nodes (the total is theirs); `None`: every node.
    pub nodes: Option<IdList>,
}

/// Why there is no table.
#[derive(Debug, thiserror::Error)]
pub enum MeminfoError {
    #[error("no node's meminfo could be read (see the warnings above)")]
    NothingRead,
    #[error("node {missing} has no meminfo here; the nodes with one are {known}")]
    NoSuchNode { missing: u32, known: IdList },
}

/// The table; each file that could not be read is a warning to
/// `observer`, and the table is made from the rest.
pub fn run(root: &Root, request: &MeminfoRequest, observer: &dyn Observer) -> Result<MeminfoTable, MeminfoError> {
    let mut gaps = Gaps::default();
    let per_node = node::read_meminfo(root, &mut gaps);
    let machine = gaps.ok(meminfo::read(root, "proc/meminfo"));
    for warning in crate::env::unread_warnings(&gaps.into_unread()) {
        observer.progress(&format!("numasleuth: warning: {warning}"));
    }
    // A kernel without NUMA has no node directory: the machine is node 0.
    let (nodes, fallback): (Vec<(u32, &Meminfo)>, bool) = match &per_node {
        Some(nodes) if !nodes.is_empty() => (
            nodes
                .iter()
                .filter(|(_, info)| !info.values.is_empty())
                .map(|(id, info)| (*id, info))
                .collect(),
            false,
        ),
        _ => (machine.as_ref().map(|m| vec![(0, m)]).unwrap_or_default(), true),
    };
    if nodes.is_empty() {
        return Err(MeminfoError::NothingRead);
    }
    let chosen = select(&nodes, request.nodes.as_ref())?;
    let mut meminfo = table(&chosen, machine.as_ref().and_then(|m| m.get("Hugepagesize")));
    if fallback {
        meminfo.notes.push(
            "this kernel has no per-node meminfo (no NUMA): node 0 is the whole machine, from /proc/meminfo".into(),
        );
    }
    Ok(meminfo)
}

/// The nodes asked for, each of which must have a meminfo.
fn select<'a>(nodes: &[(u32, &'a Meminfo)], wanted: Option<&IdList>) -> Result<Vec<(u32, &'a Meminfo)>, MeminfoError> {
    let Some(wanted) = wanted else {
        return Ok(nodes.to_vec());
    };
    let known = IdList::new(nodes.iter().map(|(id, _)| *id).collect());
    if let Some(missing) = wanted.iter().find(|&id| !known.contains(id)) {
        return Err(MeminfoError::NoSuchNode { missing, known });
    }
    Ok(nodes.iter().filter(|(id, _)| wanted.contains(*id)).copied().collect())
}
