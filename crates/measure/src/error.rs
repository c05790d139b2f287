//! Why a measurement could not run, in words a user can act on.

use thiserror::Error;

#[derive(Debug, Error)]
pub enum MeasureError {
    #[error("cannot pin to CPU {cpu}: {reason}")]
    Pin { cpu: u32, reason: String },
    #[error("cannot read this thread's CPU affinity: {0}")]
    Affinity(String),
    #[error("cannot map {}: {reason}", human(*bytes))]
    Map { bytes: usize, reason: String },
    #[error(
        "no huge pages available for a hugetlb buffer of {} on node {node}: reserve some with \
         `echo N > /sys/devices/system/node/node{node}/hugepages/hugepages-2048kB/nr_hugepages` \
         (or use --pages thp)",
        human(*bytes)
    )]
    NoHugePages { bytes: usize, node: u32 },
    #[error("no permission to map hugetlb pages: {0} (run as a user in vm/hugetlb_shm_group, or use --pages thp)")]
    HugePagePermission(String),
    #[error("cannot bind memory to node {node} (mbind): {reason}")]
    Bind { node: u32, reason: String },
    #[error("cannot fault in {} on node {node}: {reason}", human(*bytes))]
    Prefault { bytes: usize, node: u32, reason: String },
    #[error("cannot start a measurement thread: {0}")]
    Thread(String),
    #[error("cannot run `{program}`: {reason}")]
    Spawn { program: String, reason: String },
    #[error("{0}")]
    Invalid(String),
}

/// Sizes in messages as people read them (MiB from 1 MiB up).
fn human(bytes: usize) -> String {
    if bytes >= 1 << 20 {
        format!("{:.0} MiB", bytes as f64 / f64::from(1u32 << 20))
    } else {
        format!("{bytes} bytes")
    }
}
