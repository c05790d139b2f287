//! Why a `mem` measurement could not be made, each as the one line
//! `numasleuth` prints, with the collector's cause as its source.

use numasleuth_measure::MeasureError;

use crate::limits::OutOfRange;
use crate::machine::MachineError;

#[derive(Debug, thiserror::Error)]
pub enum MemError {
    #[error(transparent)]
    Machine(#[from] MachineError),
    #[error("cannot set up the latency buffer on node {node}")]
    LatencyBuffer {
        node: u32,
        #[source]
        cause: MeasureError,
    },
    #[error("latency from CPU {cpu} to node {node}")]
    Latency {
        cpu: u32,
        node: u32,
        #[source]
        cause: MeasureError,
    },
    #[error("bandwidth from node {initiator} to node {node}")]
    Bandwidth {
        initiator: u32,
        node: u32,
        #[source]
        cause: MeasureError,
    },
    #[error(
        "--threads {threads} is more than the {} CPU{} of node {node} this process may use ({}); \
         threads sharing a CPU would measure the scheduler, not memory",
        .cpus.len(), if .cpus.len() == 1 { "" } else { "s" }, numasleuth_kernel::human_list(.cpus)
    )]
    TooManyThreads { threads: u32, node: u32, cpus: Vec<u32> },
    /// A buffer of the size sweep could not be set up; `size` is said as
    /// a person reads it (`64 MiB`).
    #[error("cannot set up a {size} buffer on node {node}")]
    SweepBuffer {
        size: String,
        node: u32,
        #[source]
        cause: MeasureError,
    },
    #[error(transparent)]
    Sweep(MeasureError),
    #[error(
        "loaded latency needs a second CPU on node {home} to generate load, and only CPU {cpu} there is allowed \
         (or listed with -C)"
    )]
    NoLoadCpu { home: u32, cpu: u32 },
    #[error("loaded latency")]
    Loaded(#[source] MeasureError),
    #[error(transparent)]
    OutOfRange(#[from] OutOfRange),
}
