//! Why a measurement could not run, in words a user can act on.

use thiserror::Error;

#[derive(Debug, Error)]
pub enum MeasureError {
    #[error("cannot pin to CPU {cpu}: {reason}")]
    Pin { cpu: u32, reason: String },
    #[error("cannot read this thread's CPU affinity: {0}")]
    Affinity(String),
    #[error("cannot map {bytes} bytes: {reason}")]
    Map { bytes: usize, reason: String },
    #[error(
        "no huge pages available for a {bytes}-byte hugetlb buffer on node {node}: reserve some with \
         `echo N > /sys/devices/system/node/node{node}/hugepages/hugepages-2048kB/nr_hugepages` \
         (or use --pages thp)"
    )]
    NoHugePages { bytes: usize, node: u32 },
    #[error("no permission to map hugetlb pages: {0} (run as a user in vm/hugetlb_shm_group, or use --pages thp)")]
    HugePagePermission(String),
    #[error("cannot bind memory to node {node} (mbind): {reason}")]
    Bind { node: u32, reason: String },
    #[error("cannot fault in {bytes} bytes on node {node}: {reason}")]
    Prefault { bytes: usize, node: u32, reason: String },
    #[error("cannot start a measurement thread: {0}")]
    Thread(String),
    #[error("{0}")]
    Invalid(String),
}
